package hostauth

import (
	"fmt"
	"strings"
)

// Config comes from the server's environment (docs/production-engine.md, "Authorization").
type Config struct {
	// HostTokenKey verifies host tokens (GPU_FLEET_HOST_TOKEN_KEY, the control worker holds the same);
	// empty: no host token is accepted.
	HostTokenKey []byte
	// ControlSubjects are the client-certificate common names of the control plane
	// (GPU_FLEET_CONTROL_SUBJECTS, comma-separated): control worker, CLI, the server's own system worker.
	ControlSubjects map[string]bool
	// AnonymousIsControl (GPU_FLEET_ANONYMOUS=control) lets a call with neither certificate nor token do
	// anything: only for a frontend no one else can reach (the single-node engine on loopback).
	AnonymousIsControl bool
}

// ConfigFromEnv reads the three variables; a short key or an unknown anonymous mode stops the server.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{ControlSubjects: map[string]bool{}}
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
	return c, nil
}
