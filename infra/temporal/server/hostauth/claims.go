package hostauth

import (
	"crypto/x509/pkix"
	"encoding/asn1"
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
	cfg     Config
	now     func() time.Time
	revoked *Revoked
}

var _ authorization.ClaimMapper = (*ClaimMapper)(nil)

func NewClaimMapper(cfg Config, now func() time.Time) *ClaimMapper {
	if now == nil {
		now = time.Now
	}
	return &ClaimMapper{cfg: cfg, now: now, revoked: NewRevoked(cfg.RevokedFile)}
}

// Revoked is the mapper's denylist (nil without GPU_FLEET_REVOKED_HOSTS_FILE), for the server to reload.
func (m *ClaimMapper) Revoked() *Revoked { return m.revoked }

var (
	ErrTooLong = errors.New("host token expires further ahead than this server accepts (GPU_FLEET_HOST_TOKEN_MAX_DAYS)")
	ErrRevoked = errors.New("host token belongs to a retired rental")
)

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
		now := m.now()
		h, err := Verify(m.cfg.HostTokenKey, strings.TrimSpace(token), now)
		if err != nil {
			return nil, err
		}
		if m.cfg.MaxTokenLifetime > 0 && h.Expiry.Sub(now) > m.cfg.MaxTokenLifetime {
			return nil, ErrTooLong
		}
		if m.revoked.Has(h.Label) {
			return nil, ErrRevoked
		}
		return &authorization.Claims{Subject: "host:" + h.Label, Extensions: &h}, nil
	}
	if cn, ok := singleCN(info.TLSSubject); ok && m.cfg.ControlSubjects[cn] {
		return &authorization.Claims{Subject: info.TLSSubject.CommonName, System: authorization.RoleAdmin}, nil
	}
	// A certificate from the CA that is neither the control plane's nor carrying a host token: no rights.
	c := &authorization.Claims{}
	if info.TLSSubject != nil {
		c.Subject = info.TLSSubject.CommonName
	}
	return c, nil
}

// singleCN is the subject's common name when it holds exactly one: Go's pkix.Name.CommonName is the
// last of several, so /CN=nobody/CN=gpu-fleet-control would otherwise read as the control plane.
func singleCN(n *pkix.Name) (string, bool) {
	if n == nil {
		return "", false
	}
	var cns []string
	for _, a := range n.Names {
		if a.Type.Equal(oidCommonName) {
			s, _ := a.Value.(string)
			cns = append(cns, s)
		}
	}
	if len(cns) != 1 || cns[0] != n.CommonName {
		return "", false
	}
	return cns[0], true
}

var oidCommonName = asn1.ObjectIdentifier{2, 5, 4, 3}
