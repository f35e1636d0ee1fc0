package hostauth

import (
	"context"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/log/tag"
	"google.golang.org/grpc"
)

// Limits bound what one host token may take from a frontend, so a host cannot use up the namespace's
// shared limits (concurrent polls, calls per second) that the control worker and the other hosts poll
// under, nor write large heartbeats at the server. Upstream limits per namespace, not per caller.
type Limits struct {
	// MaxPolls: concurrent PollActivityTaskQueue calls (GPU_FLEET_HOST_MAX_POLLS). The GPU-host worker
	// holds one; a restarted worker may overlap its old poll for a moment.
	MaxPolls int
	// RPS and Burst: a token bucket over every call of the token (GPU_FLEET_HOST_RPS, GPU_FLEET_HOST_BURST).
	RPS   float64
	Burst int
	// MaxHeartbeatBytes: the largest RecordActivityTaskHeartbeat details (GPU_FLEET_HOST_MAX_HEARTBEAT_BYTES),
	// well below the server's blob limit (limit.blobSize.error, 2 MB); ours are a few hundred bytes. A
	// larger one fails the host's step as the server's own limit would (LimitHosts).
	MaxHeartbeatBytes int
}

var DefaultLimits = Limits{MaxPolls: 4, RPS: 10, Burst: 50, MaxHeartbeatBytes: 64 << 10}

func limitsFromEnv(getenv func(string) string) (Limits, error) {
	l := DefaultLimits
	polls, err := positive(getenv, "GPU_FLEET_HOST_MAX_POLLS", float64(l.MaxPolls))
	if err != nil {
		return l, err
	}
	if l.RPS, err = positive(getenv, "GPU_FLEET_HOST_RPS", l.RPS); err != nil {
		return l, err
	}
	burst, err := positive(getenv, "GPU_FLEET_HOST_BURST", float64(l.Burst))
	if err != nil {
		return l, err
	}
	hb, err := positive(getenv, "GPU_FLEET_HOST_MAX_HEARTBEAT_BYTES", float64(l.MaxHeartbeatBytes))
	if err != nil {
		return l, err
	}
	l.MaxPolls, l.Burst, l.MaxHeartbeatBytes = int(polls), int(burst), int(hb)
	return l, nil
}

// limiter keeps each host token's bucket and poll count, by rental label.
type limiter struct {
	limits    Limits
	now       func() time.Time
	mu        sync.Mutex
	hosts     map[string]*hostUse
	lastSweep time.Time
}

type hostUse struct {
	tokens float64
	at     time.Time
	polls  int
}

func newLimiter(l Limits, now func() time.Time) *limiter {
	if now == nil {
		now = time.Now
	}
	return &limiter{limits: l, now: now, hosts: map[string]*hostUse{}}
}

// use returns the label's state, its bucket refilled to now; callers hold mu.
func (l *limiter) use(label string) *hostUse {
	now := l.now()
	if now.Sub(l.lastSweep) > time.Minute {
		l.sweep(now)
	}
	u := l.hosts[label]
	if u == nil {
		u = &hostUse{tokens: float64(l.limits.Burst), at: now}
		l.hosts[label] = u
	}
	u.tokens = min(float64(l.limits.Burst), u.tokens+now.Sub(u.at).Seconds()*l.limits.RPS)
	u.at = now
	return u
}

// sweep forgets hosts with no poll open and a bucket full again: their state is the fresh one.
func (l *limiter) sweep(now time.Time) {
	full := time.Duration(float64(l.limits.Burst)/l.limits.RPS*float64(time.Second)) + time.Second
	for label, u := range l.hosts {
		if u.polls == 0 && now.Sub(u.at) > full {
			delete(l.hosts, label)
		}
	}
	l.lastSweep = now
}

// call spends one token of the label's bucket for a call, or says why it may not be made now.
func (l *limiter) call(label string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.use(label)
	if u.tokens < 1 {
		return serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT,
			fmt.Sprintf("host %s is over its %.0f calls/s", label, l.limits.RPS))
	}
	u.tokens--
	return nil
}

func (l *limiter) acquirePoll(label string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.use(label)
	if u.polls >= l.limits.MaxPolls {
		return false
	}
	u.polls++
	return true
}

func (l *limiter) releasePoll(label string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.hosts[label]; u != nil && u.polls > 0 {
		u.polls--
	}
}

// LimitHosts is a frontend interceptor (temporal.WithChainedFrontendGrpcInterceptors), after the
// authorizer (which has spent the call's rate token already): a host token's activity polls beyond
// MaxPolls are refused at once, so they never wait in matching beside the control worker's; a host's
// heartbeat over MaxHeartbeatBytes fails its step as the server does a heartbeat over its own blob
// limit, with the same reason, so the workflow reads it as the host's payload (HostPayloadTooLarge).
func (a *Authorizer) LimitHosts(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	h := hostOf(ctx)
	if h == nil {
		return handler(ctx, req)
	}
	switch info.FullMethod {
	case api.WorkflowServicePrefix + "PollActivityTaskQueue":
		if !a.limiter.acquirePoll(h.Label) {
			return nil, serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_CONCURRENT_LIMIT,
				fmt.Sprintf("host %s already holds %d activity polls", h.Label, a.limiter.limits.MaxPolls))
		}
		defer a.limiter.releasePoll(h.Label)
	case api.WorkflowServicePrefix + "RecordActivityTaskHeartbeat":
		hb, ok := req.(*workflowservice.RecordActivityTaskHeartbeatRequest)
		if ok && hb.GetDetails().Size() > a.limiter.limits.MaxHeartbeatBytes {
			return a.failOversizedHeartbeat(ctx, h, hb, info)
		}
	}
	return handler(ctx, req)
}

// HeartbeatExceedsLimit is the server's own reason for failing a step whose heartbeat is over its blob
// limit (go.temporal.io/server common.FailureReasonHeartbeatExceedsLimit): the workflow knows it.
const HeartbeatExceedsLimit = "Heartbeat details exceed size limit."

func (a *Authorizer) failOversizedHeartbeat(ctx context.Context, h *HostToken, hb *workflowservice.RecordActivityTaskHeartbeatRequest, info *grpc.UnaryServerInfo) (any, error) {
	srv, ok := info.Server.(workflowservice.WorkflowServiceServer)
	if !ok {
		return nil, serviceerror.NewInvalidArgument(HeartbeatExceedsLimit)
	}
	a.logger.Warn("gpu-fleet failed a host's step for its oversized heartbeat",
		tag.NewStringTag("subject", "host:"+h.Label),
		tag.NewInt("bytes", hb.GetDetails().Size()),
		tag.NewInt("limit", a.limiter.limits.MaxHeartbeatBytes))
	_, err := srv.RespondActivityTaskFailed(ctx, &workflowservice.RespondActivityTaskFailedRequest{
		Namespace: hb.GetNamespace(),
		TaskToken: hb.GetTaskToken(),
		Failure: &failurepb.Failure{Message: HeartbeatExceedsLimit,
			FailureInfo: &failurepb.Failure_ServerFailureInfo{ServerFailureInfo: &failurepb.ServerFailureInfo{NonRetryable: true}}},
		Identity: hb.GetIdentity(),
	})
	if err != nil {
		return nil, err
	}
	return &workflowservice.RecordActivityTaskHeartbeatResponse{CancelRequested: true}, nil
}

// hostOf is the host token the authorizer's claims hold for this call, if it is a host's.
func hostOf(ctx context.Context) *HostToken {
	c, _ := ctx.Value(authorization.MappedClaims).(*authorization.Claims)
	if c == nil {
		return nil
	}
	h, _ := c.Extensions.(*HostToken)
	return h
}
