package hostauth

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config comes from the server's environment (docs/production-engine.md, "Authorization").
type Config struct {
	// HostTokenKey verifies host tokens (GPU_FLEET_HOST_TOKEN_KEY, the control worker holds the same);
	// empty: no host token is accepted.
	HostTokenKey []byte
	// ControlSubjects are the client-certificate common names of the control plane
	// (GPU_FLEET_CONTROL_SUBJECTS, comma-separated): control worker, CLI, the server's own system worker.
	// A certificate is the control plane's only if its subject holds exactly one CN and it is listed.
	ControlSubjects map[string]bool
	// AnonymousIsControl (GPU_FLEET_ANONYMOUS=control) lets a call with neither certificate nor token do
	// anything: only for a frontend no one else can reach (the single-node engine on loopback).
	AnonymousIsControl bool
	// MaxTokenLifetime (GPU_FLEET_HOST_TOKEN_MAX_DAYS): a token whose expiry lies further ahead is
	// refused, whatever the minter wrote. At least the control worker's HOST_TOKEN_TTL_DAYS.
	MaxTokenLifetime time.Duration
	// RevokedFile (GPU_FLEET_REVOKED_HOSTS_FILE): labels of retired rentals, one a line, reloaded while
	// the server runs; their tokens are refused. Empty: no denylist.
	RevokedFile string
	// Limits are per host token, on each frontend.
	Limits Limits
}

// DefaultMaxTokenDays: the control worker's default HOST_TOKEN_TTL_DAYS (90) and two days of clock skew.
const DefaultMaxTokenDays = 92

// ConfigFromEnv reads the variables; a short key or an unknown anonymous mode stops the server.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{ControlSubjects: map[string]bool{}, RevokedFile: getenv("GPU_FLEET_REVOKED_HOSTS_FILE")}
	if k := getenv("GPU_FLEET_HOST_TOKEN_KEY"); k != "" {
		if len(k) < MinKeyLength {
			return c, fmt.Errorf("GPU_FLEET_HOST_TOKEN_KEY must be at least %d characters", MinKeyLength)
		}
		c.HostTokenKey = []byte(k)
	}
	for _, s := range strings.Split(getenv("GPU_FLEET_CONTROL_SUBJECTS"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.ControlSubjects[s] = true
		}
	}
	switch getenv("GPU_FLEET_ANONYMOUS") {
	case "", "deny":
	case "control":
		c.AnonymousIsControl = true
	default:
		return c, fmt.Errorf("GPU_FLEET_ANONYMOUS must be deny (default) or control")
	}
	days, err := positive(getenv, "GPU_FLEET_HOST_TOKEN_MAX_DAYS", DefaultMaxTokenDays)
	if err != nil {
		return c, err
	}
	c.MaxTokenLifetime = time.Duration(days * float64(24*time.Hour))
	c.Limits, err = limitsFromEnv(getenv)
	return c, err
}

// positive reads a number > 0, or def when the variable is unset.
func positive(getenv func(string) string, name string, def float64) (float64, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s must be a number above 0, got %q", name, v)
	}
	return n, nil
}
