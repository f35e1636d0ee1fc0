package hostauth

import (
	"errors"
	"strings"
	"time"

	"go.temporal.io/server/common/authorization"
)

// ClaimMapper turns a call's credential into claims: a bearer host token into that rental's claims
// (Extensions holds its HostToken), a control-plane client certificate into system admin. Any bearer
// header must be a valid host token, whatever certificate came with it: the hosts' front forwards
// host calls with a certificate of its own, which is not the control plane's.
type ClaimMapper struct {
	cfg Config
	now func() time.Time
}

var _ authorization.ClaimMapper = (*ClaimMapper)(nil)

func NewClaimMapper(cfg Config, now func() time.Time) *ClaimMapper {
	if now == nil {
		now = time.Now
	}
	return &ClaimMapper{cfg: cfg, now: now}
}

var errNoHostKey = errors.New("host token presented but this server has no GPU_FLEET_HOST_TOKEN_KEY")

func (m *ClaimMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	if info.AuthToken != "" {
		scheme, token, ok := strings.Cut(info.AuthToken, " ")
		if !ok || !strings.EqualFold(scheme, "bearer") {
			return nil, ErrNotHostToken
		}
		if len(m.cfg.HostTokenKey) == 0 {
			return nil, errNoHostKey
		}
		h, err := Verify(m.cfg.HostTokenKey, strings.TrimSpace(token), m.now())
		if err != nil {
			return nil, err
		}
		return &authorization.Claims{Subject: "host:" + h.Label, Extensions: &h}, nil
	}
	if info.TLSSubject != nil && m.cfg.ControlSubjects[info.TLSSubject.CommonName] {
		return &authorization.Claims{Subject: info.TLSSubject.CommonName, System: authorization.RoleAdmin}, nil
	}
	// A certificate from the CA that is neither the control plane's nor carrying a host token: no rights.
	c := &authorization.Claims{}
	if info.TLSSubject != nil {
		c.Subject = info.TLSSubject.CommonName
	}
	return c, nil
}
