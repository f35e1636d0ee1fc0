// Package hostauth is the gpu-fleet server's authorization: a per-rental host token (minted by the
// control worker's rent activity, verified here) that reaches only that rental's own task queue and
// workflow, and the control plane's client certificate. See docs/security.md.
package hostauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TokenPrefix names the format's version; anything else in a bearer header is not a host token.
const TokenPrefix = "gfh1."

// tagBytes: HMAC-SHA256 truncated to 128 bits (RFC 2104 §5 allows truncating to half the hash), so a
// token with a full rental label fits Vast's 256-character env entry.
const tagBytes = 16

// MinKeyLength is the shortest GPU_FLEET_HOST_TOKEN_KEY accepted, in characters.
const MinKeyLength = 32

// HostToken is what a host token binds: the namespace, the rental's label (its queue is host/<label>),
// the lifecycle's workflow id (whose activity tasks it may answer) and when it stops being accepted.
type HostToken struct {
	Namespace  string
	Label      string
	WorkflowID string
	Expiry     time.Time
}

// Queue is the only task queue the token may poll.
func (h HostToken) Queue() string { return "host/" + h.Label }

// b64 is strict: the unused low bits of a last character must be zero, so one token has one spelling
// (16 strings decoded to the same tag without it).
var b64 = base64.RawURLEncoding.Strict()

// Mint returns gfh1.<base64url(namespace \n label \n workflowId \n expiry unix s)>.<base64url(tag)>, the
// tag being HMAC-SHA256(key, everything before the last dot), truncated. activities/vast/host-token.ts
// mints the same bytes (testdata/token-vectors.json holds both sides to one answer).
func Mint(key []byte, h HostToken) (string, error) {
	fields := []struct{ name, v string }{{"namespace", h.Namespace}, {"label", h.Label}, {"workflow id", h.WorkflowID}}
	for _, f := range fields {
		if f.v == "" || strings.ContainsRune(f.v, '\n') {
			return "", fmt.Errorf("host token %s must be non-empty and one line", f.name)
		}
	}
	payload := strings.Join([]string{h.Namespace, h.Label, h.WorkflowID, strconv.FormatInt(h.Expiry.Unix(), 10)}, "\n")
	body := TokenPrefix + b64.EncodeToString([]byte(payload))
	return body + "." + b64.EncodeToString(macTag(key, body)), nil
}

// Errors say what is wrong without quoting the token (they reach the server log).
var (
	ErrNotHostToken = errors.New("bearer credential is not a gpu-fleet host token")
	ErrBadSignature = errors.New("host token signature does not verify")
	ErrMalformed    = errors.New("host token payload is malformed")
	ErrExpired      = errors.New("host token has expired")
)

// Verify checks the tag (in constant time) before reading the payload, then the expiry against now.
func Verify(key []byte, token string, now time.Time) (HostToken, error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return HostToken{}, ErrNotHostToken
	}
	dot := strings.LastIndexByte(token, '.')
	if dot < len(TokenPrefix) {
		return HostToken{}, ErrMalformed
	}
	body, sig := token[:dot], token[dot+1:]
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, macTag(key, body)) {
		return HostToken{}, ErrBadSignature
	}
	raw, err := b64.DecodeString(body[len(TokenPrefix):])
	if err != nil {
		return HostToken{}, ErrMalformed
	}
	f := strings.Split(string(raw), "\n")
	if len(f) != 4 || f[0] == "" || f[1] == "" || f[2] == "" {
		return HostToken{}, ErrMalformed
	}
	exp, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return HostToken{}, ErrMalformed
	}
	h := HostToken{Namespace: f[0], Label: f[1], WorkflowID: f[2], Expiry: time.Unix(exp, 0).UTC()}
	if !now.Before(h.Expiry) {
		return HostToken{}, ErrExpired
	}
	return h, nil
}

func macTag(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return m.Sum(nil)[:tagBytes]
}
