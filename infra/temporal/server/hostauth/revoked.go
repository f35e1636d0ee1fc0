package hostauth

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Revoked is the denylist of retired rentals: their labels, one a line, in the file
// GPU_FLEET_REVOKED_HOSTS_FILE, which the control plane's exporter rewrites from the fleet database
// (workers/host-token-revocations.ts). The server rereads it every ReloadEvery, so a destroyed rental's
// token stops working within the exporter's interval and this one, well under a minute.
type Revoked struct {
	path   string
	mu     sync.RWMutex
	labels map[string]bool
	stamp  string
}

// ReloadEvery is how often the server looks at the file for a change.
const ReloadEvery = 10 * time.Second

// NewRevoked returns nil (nothing revoked) without a path; the first Reload fills it.
func NewRevoked(path string) *Revoked {
	if path == "" {
		return nil
	}
	return &Revoked{path: path, labels: map[string]bool{}}
}

// Has says whether the label's rental is retired; a nil list revokes nothing.
func (r *Revoked) Has(label string) bool {
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.labels[label]
}

// Len is how many labels the list holds.
func (r *Revoked) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.labels)
}

// Reload rereads the file when its size or modification time changed. A missing file is an empty list
// (the exporter has not written it yet); an unreadable one keeps the list it had, and says so.
func (r *Revoked) Reload() (changed bool, err error) {
	info, err := os.Stat(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return r.swap(map[string]bool{}, "missing"), nil
	}
	if err != nil {
		return false, err
	}
	stamp := info.ModTime().String() + "/" + strconv.FormatInt(info.Size(), 10)
	r.mu.RLock()
	same := stamp == r.stamp
	r.mu.RUnlock()
	if same {
		return false, nil
	}
	raw, err := os.ReadFile(r.path)
	if err != nil {
		return false, err
	}
	return r.swap(ParseRevoked(raw), stamp), nil
}

func (r *Revoked) swap(labels map[string]bool, stamp string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := stamp != r.stamp
	r.labels, r.stamp = labels, stamp
	return changed
}

// ParseRevoked reads one label a line; blank lines and lines starting with # are skipped.
func ParseRevoked(raw []byte) map[string]bool {
	out := map[string]bool{}
	s := bufio.NewScanner(bytes.NewReader(raw))
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out
}
