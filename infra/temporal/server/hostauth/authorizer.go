package hostauth

import (
	"context"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	deploymentpb "go.temporal.io/api/deployment/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.temporal.io/server/common/tasktoken"
)

// Authorizer: the control plane may do anything; a host token only what an activity-only worker on its
// own queue needs (HostCalls); a call with no credential is refused unless AnonymousIsControl.
type Authorizer struct {
	anonymousIsControl bool
	sealKey            []byte
	tokens             *tasktoken.Serializer
	limiter            *limiter
	logger             log.Logger
}

var _ authorization.Authorizer = (*Authorizer)(nil)

func NewAuthorizer(cfg Config, logger log.Logger) *Authorizer {
	limits := cfg.Limits
	if limits == (Limits{}) {
		limits = DefaultLimits
	}
	a := &Authorizer{anonymousIsControl: cfg.AnonymousIsControl, tokens: tasktoken.NewSerializer(),
		limiter: newLimiter(limits, nil), logger: logger}
	if len(cfg.HostTokenKey) > 0 {
		a.sealKey = sealKey(cfg.HostTokenKey)
	}
	return a
}

// HostCalls are the WorkflowService calls a host token may make: what the TypeScript SDK's core worker
// makes for an activity-only worker (start, poll, answer, heartbeat, worker heartbeat, shutdown).
var HostCalls = map[string]func(a *Authorizer, h *HostToken, req any) string{
	"GetSystemInfo":                func(*Authorizer, *HostToken, any) string { return "" },
	"DescribeNamespace":            func(*Authorizer, *HostToken, any) string { return "" },
	"PollActivityTaskQueue":        ownQueuePoll,
	"RecordActivityTaskHeartbeat":  (*Authorizer).ownWorkflowTask,
	"RespondActivityTaskCompleted": (*Authorizer).ownWorkflowTask,
	"RespondActivityTaskFailed":    (*Authorizer).ownWorkflowTask,
	"RespondActivityTaskCanceled":  (*Authorizer).ownWorkflowTask,
	"RecordWorkerHeartbeat":        ownWorkerHeartbeat,
	"ShutdownWorker":               ownShutdown,
}

var allow = authorization.Result{Decision: authorization.DecisionAllow}

func deny(reason string) authorization.Result {
	return authorization.Result{Decision: authorization.DecisionDeny, Reason: reason}
}

func (a *Authorizer) Authorize(_ context.Context, c *authorization.Claims, t *authorization.CallTarget) (authorization.Result, error) {
	if authorization.IsHealthCheckAPI(t.APIName) {
		return allow, nil
	}
	if c == nil {
		if a.anonymousIsControl {
			return allow, nil
		}
		return a.refuse("anonymous", t, "no credential: a client certificate or a host token is required"), nil
	}
	if c.System&authorization.RoleAdmin != 0 {
		return allow, nil
	}
	h, ok := c.Extensions.(*HostToken)
	if !ok {
		return a.refuse(c.Subject, t, "this credential grants nothing"), nil
	}
	// Every call of a host counts against its own rate, refused ones too, before the namespace's shared
	// limits see it (the frontend runs those after the authorizer). The error reaches the host as
	// RESOURCE_EXHAUSTED with frontend.exposeAuthorizerErrors on (our dynamic config sets it).
	if err := a.limiter.call(h.Label); err != nil {
		return deny(err.Error()), err
	}
	method, ok := strings.CutPrefix(t.APIName, api.WorkflowServicePrefix)
	check := HostCalls[method]
	if !ok || check == nil {
		return a.refuse(c.Subject, t, "a host credential may not call "+t.APIName), nil
	}
	// The frontend fills a respond's namespace from its task token before this runs, and refuses a
	// request namespace that differs from the token's (frontend.enableTokenNamespaceEnforcement).
	if t.Namespace != h.Namespace {
		return a.refuse(c.Subject, t, "a host credential is valid only in namespace "+h.Namespace), nil
	}
	if why := check(a, h, t.Request); why != "" {
		return a.refuse(c.Subject, t, why), nil
	}
	a.logger.Debug("gpu-fleet authorizer allowed a host call", tag.NewStringTag("api", t.APIName), tag.NewStringTag("subject", c.Subject))
	return allow, nil
}

func (a *Authorizer) refuse(subject string, t *authorization.CallTarget, reason string) authorization.Result {
	a.logger.Warn("gpu-fleet authorizer refused a call",
		tag.NewStringTag("api", t.APIName),
		tag.NewStringTag("call-namespace", t.Namespace),
		tag.NewStringTag("subject", subject),
		tag.NewStringTag("reason", reason))
	return deny(reason)
}

func ownQueuePoll(_ *Authorizer, h *HostToken, req any) string {
	r, ok := req.(*workflowservice.PollActivityTaskQueueRequest)
	if !ok || r.GetTaskQueue().GetName() != h.Queue() {
		return "a host credential may poll only " + h.Queue()
	}
	// A versioned poll registers a worker deployment and version, and the server starts system
	// workflows for each in the namespace, under quotas the control plane's own workers share.
	if versioned(r.GetWorkerVersionCapabilities(), r.GetDeploymentOptions()) {
		return "a host credential may not poll with worker deployment or versioning options"
	}
	return ""
}

// versioned: the poll asks for Worker Versioning (deployment-based or build-id based); an unversioned
// worker's build id alone is only a stamp on its tasks.
func versioned(c *commonpb.WorkerVersionCapabilities, d *deploymentpb.WorkerDeploymentOptions) bool {
	return d.GetWorkerVersioningMode() == enumspb.WORKER_VERSIONING_MODE_VERSIONED ||
		d.GetDeploymentName() != "" || c.GetUseVersioning() || c.GetDeploymentSeriesName() != ""
}

type taskTokenRequest interface{ GetTaskToken() []byte }

// ownWorkflowTask: only a task token this server sealed for this host (seal.go), naming this rental's
// lifecycle (the *ById calls are not allowed at all).
func (a *Authorizer) ownWorkflowTask(h *HostToken, req any) string {
	r, ok := req.(taskTokenRequest)
	if !ok {
		return "no task token"
	}
	raw, sealed := unseal(a.sealKey, h.Label, r.GetTaskToken())
	if !sealed {
		return "a host credential may answer only activity tasks it was handed on " + h.Queue()
	}
	tok, err := a.tokens.Deserialize(raw)
	if err != nil || tok.GetWorkflowId() != h.WorkflowID {
		return "a host credential may answer only activity tasks of workflow " + h.WorkflowID
	}
	// Without a scheduled event id the history service finds the activity by its id, as a *ById call
	// would: the ids are small sequential numbers, easy to guess for a forged token.
	if tok.GetScheduledEventId() == 0 {
		return "a host credential's task token must name its scheduled event"
	}
	return ""
}

func ownWorkerHeartbeat(_ *Authorizer, h *HostToken, req any) string {
	r, ok := req.(*workflowservice.RecordWorkerHeartbeatRequest)
	if !ok {
		return "malformed worker heartbeat"
	}
	for _, hb := range r.GetWorkerHeartbeat() {
		if q := hb.GetTaskQueue(); q != "" && q != h.Queue() {
			return "a host credential may report only a worker on " + h.Queue()
		}
	}
	return ""
}

// ownShutdown: a sticky queue belongs to a workflow worker; a host has none, and naming the control
// worker's would push its cached workflows back to the shared queue.
func ownShutdown(_ *Authorizer, h *HostToken, req any) string {
	r, ok := req.(*workflowservice.ShutdownWorkerRequest)
	if !ok || r.GetStickyTaskQueue() != "" {
		return "a host credential may not shut down a sticky queue"
	}
	if q := r.GetWorkerHeartbeat().GetTaskQueue(); q != "" && q != h.Queue() {
		return "a host credential may report only a worker on " + h.Queue()
	}
	return ""
}
