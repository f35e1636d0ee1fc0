package hostauth

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// testdata/token-vectors.json is shared with test/security/host-token.test.ts: both implementations must
// mint the same tokens and reach the same verdicts. UPDATE_VECTORS=1 go test ./hostauth rewrites it.
type vectorFile struct {
	Comment string   `json:"comment"`
	Key     string   `json:"key"`
	Now     int64    `json:"now"`
	Vectors []vector `json:"vectors"`
}

type vector struct {
	Name       string `json:"name"`
	Token      string `json:"token"`
	Namespace  string `json:"namespace,omitempty"`
	Label      string `json:"label,omitempty"`
	WorkflowID string `json:"workflowId,omitempty"`
	Expiry     int64  `json:"expiry,omitempty"`
	// Error: "" when valid, else one of not-host-token, signature, malformed, expired.
	Error string `json:"error"`
}

const vectorsPath = "testdata/token-vectors.json"

var errorNames = map[error]string{
	ErrNotHostToken: "not-host-token",
	ErrBadSignature: "signature",
	ErrMalformed:    "malformed",
	ErrExpired:      "expired",
}

func TestTokenVectors(t *testing.T) {
	if os.Getenv("UPDATE_VECTORS") == "1" {
		writeVectors(t)
	}
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	key, now := []byte(f.Key), time.Unix(f.Now, 0)
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			h, err := Verify(key, v.Token, now)
			if v.Error != "" {
				if got := errorNames[err]; got != v.Error {
					t.Fatalf("verify: got error %v, want %s", err, v.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			want := HostToken{Namespace: v.Namespace, Label: v.Label, WorkflowID: v.WorkflowID, Expiry: time.Unix(v.Expiry, 0).UTC()}
			if h != want {
				t.Fatalf("verify: got %+v, want %+v", h, want)
			}
			if minted, _ := Mint(key, want); minted != v.Token {
				t.Fatalf("mint: got %s, want %s", minted, v.Token)
			}
		})
	}
}

func writeVectors(t *testing.T) {
	key := "gpu-fleet-token-vector-key-not-a-secret-0123"
	now := time.Unix(1767225600, 0) // 2026-01-01T00:00:00Z
	mint := func(h HostToken) string {
		tok, err := Mint([]byte(key), h)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	valid := []HostToken{
		{"default", "gpufleet-instance-offer-4242.0b9c3c0e-6f3e-4b1a-9c55-2f4f0f3a9d11", "instance-offer-4242", now.Add(30 * 24 * time.Hour)},
		{"gpu-fleet", "gpufleet-x", "wf with spaces/ünïcode", now.Add(time.Second)},
	}
	var vs []vector
	for i, h := range valid {
		vs = append(vs, vector{Name: []string{"rental", "unicode workflow id"}[i], Token: mint(h), Namespace: h.Namespace,
			Label: h.Label, WorkflowID: h.WorkflowID, Expiry: h.Expiry.Unix()})
	}
	good := vs[0].Token
	flipped := []byte(good)
	if flipped[len(flipped)-2] == 'A' {
		flipped[len(flipped)-2] = 'B'
	} else {
		flipped[len(flipped)-2] = 'A'
	}
	other := mint(HostToken{"default", "gpufleet-other", "instance-offer-1", now.Add(time.Hour)})
	body := func(tok string) string { return tok[:lastDot(tok)] }
	sig := func(tok string) string { return tok[lastDot(tok)+1:] }
	threeFields := TokenPrefix + b64.EncodeToString([]byte("default\ngpufleet-x\n1769904000"))
	vs = append(vs,
		vector{Name: "expired", Token: mint(HostToken{"default", "gpufleet-x", "wf", now}), Error: "expired"},
		vector{Name: "flipped tag", Token: string(flipped), Error: "signature"},
		vector{Name: "payload of another token", Token: body(other) + "." + sig(good), Error: "signature"},
		vector{Name: "signed with another key", Token: mintWith("another-key-of-at-least-32-characters!!", valid[0]), Error: "signature"},
		vector{Name: "three fields, signed", Token: threeFields + "." + b64.EncodeToString(macTag([]byte(key), threeFields)), Error: "malformed"},
		vector{Name: "legacy shared key", Token: "0123456789abcdef0123456789abcdef", Error: "not-host-token"},
		vector{Name: "no tag", Token: TokenPrefix, Error: "malformed"},
		vector{Name: "tag spelled with unused bits set", Token: respell(good), Error: "signature"},
	)
	out, _ := json.MarshalIndent(vectorFile{
		Comment: "Host token test vectors shared by infra/temporal/server/hostauth (Go) and activities/vast/host-token.ts (TypeScript). Regenerate: UPDATE_VECTORS=1 go test ./hostauth",
		Key:     key, Now: now.Unix(), Vectors: vs,
	}, "", "  ")
	if err := os.WriteFile(vectorsPath, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mintWith(key string, h HostToken) string {
	tok, _ := Mint([]byte(key), h)
	return tok
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

func TestMintRefusesMultilineFields(t *testing.T) {
	_, err := Mint([]byte("k"), HostToken{"default", "a\nb", "wf", time.Now()})
	if err == nil || errors.Is(err, ErrMalformed) {
		t.Fatalf("want a field error, got %v", err)
	}
}

// respell writes the tag's last character with its unused low bits set: the same bytes to a lenient
// base64 decoder, another token to ours.
func respell(tok string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, tok[len(tok)-1])
	return tok[:len(tok)-1] + string(alphabet[i|0x0f])
}
