package hostauth

import (
	"context"
	"testing"
	"time"

	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workerpb "go.temporal.io/api/worker/v1"
	"go.temporal.io/api/workflowservice/v1"
	tokenspb "go.temporal.io/server/api/token/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/log"
)

const testKey = "gpu-fleet-authorizer-test-key-0123456789"

var (
	t0   = time.Unix(1767225600, 0)
	mine = HostToken{Namespace: "fleet", Label: "gpufleet-a", WorkflowID: "instance-offer-1", Expiry: t0.Add(time.Hour)}
)

func setup(t *testing.T, anonymousIsControl bool) (*ClaimMapper, *Authorizer) {
	t.Helper()
	cfg := Config{HostTokenKey: []byte(testKey), ControlSubjects: map[string]bool{"gpu-fleet-control": true},
		AnonymousIsControl: anonymousIsControl, MaxTokenLifetime: DefaultMaxTokenDays * 24 * time.Hour}
	return NewClaimMapper(cfg, func() time.Time { return t0 }), NewAuthorizer(cfg, log.NewNoopLogger())
}

func hostClaims(t *testing.T, m *ClaimMapper, h HostToken) *authorization.Claims {
	t.Helper()
	tok, err := Mint([]byte(testKey), h)
	if err != nil {
		t.Fatal(err)
	}
	// The front forwards host calls with its own certificate: the token decides, not the certificate.
	c, err := m.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer " + tok, TLSSubject: subject("gpu-fleet-host-front")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rawToken is a task token as the history service makes it (and as anyone can write one).
func rawToken(t *testing.T, workflowID string) []byte {
	t.Helper()
	b, err := (&tokenspb.Task{NamespaceId: "ns-id", WorkflowId: workflowID, RunId: "run", ScheduledEventId: 5, ActivityId: "1"}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// taskToken is one the server handed host gpufleet-a (sealed by the Seal interceptor).
func taskToken(t *testing.T, workflowID string) []byte {
	t.Helper()
	return seal(sealKey([]byte(testKey)), "gpufleet-a", rawToken(t, workflowID))
}

func byActivityID(t *testing.T, workflowID string) []byte {
	t.Helper()
	b, err := (&tokenspb.Task{NamespaceId: "ns-id", WorkflowId: workflowID, RunId: "run", ActivityId: "3"}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return seal(sealKey([]byte(testKey)), "gpufleet-a", b)
}

func decide(t *testing.T, a *Authorizer, c *authorization.Claims, method, ns string, req any) authorization.Decision {
	t.Helper()
	r, err := a.Authorize(context.Background(), c, &authorization.CallTarget{APIName: api.WorkflowServicePrefix + method, Namespace: ns, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	return r.Decision
}

const (
	allowed = authorization.DecisionAllow
	refused = authorization.DecisionDeny
)

func TestHostTokenReachesOnlyItsOwnQueueAndWorkflow(t *testing.T) {
	m, a := setup(t, false)
	c := hostClaims(t, m, mine)
	poll := func(q string) *workflowservice.PollActivityTaskQueueRequest {
		return &workflowservice.PollActivityTaskQueueRequest{Namespace: "fleet", TaskQueue: &taskqueuepb.TaskQueue{Name: q}}
	}
	cases := []struct {
		name   string
		method string
		ns     string
		req    any
		want   authorization.Decision
	}{
		{"system info", "GetSystemInfo", "", &workflowservice.GetSystemInfoRequest{}, allowed},
		{"describe own namespace", "DescribeNamespace", "fleet", &workflowservice.DescribeNamespaceRequest{Namespace: "fleet"}, allowed},
		{"describe another namespace", "DescribeNamespace", "other", &workflowservice.DescribeNamespaceRequest{Namespace: "other"}, refused},
		{"poll own queue", "PollActivityTaskQueue", "fleet", poll("host/gpufleet-a"), allowed},
		{"poll own queue, other namespace", "PollActivityTaskQueue", "other", poll("host/gpufleet-a"), refused},
		{"poll control queue", "PollActivityTaskQueue", "fleet", poll("gpu-fleet-control"), refused},
		{"poll another host", "PollActivityTaskQueue", "fleet", poll("host/gpufleet-b"), refused},
		{"poll a partition of own queue", "PollActivityTaskQueue", "fleet", poll("/_sys/host/gpufleet-a/1"), refused},
		{"workflow tasks on own queue", "PollWorkflowTaskQueue", "fleet", &workflowservice.PollWorkflowTaskQueueRequest{Namespace: "fleet", TaskQueue: &taskqueuepb.TaskQueue{Name: "host/gpufleet-a"}}, refused},
		{"complete own task", "RespondActivityTaskCompleted", "fleet", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: taskToken(t, "instance-offer-1")}, allowed},
		{"fail own task", "RespondActivityTaskFailed", "fleet", &workflowservice.RespondActivityTaskFailedRequest{TaskToken: taskToken(t, "instance-offer-1")}, allowed},
		{"cancel own task", "RespondActivityTaskCanceled", "fleet", &workflowservice.RespondActivityTaskCanceledRequest{TaskToken: taskToken(t, "instance-offer-1")}, allowed},
		{"heartbeat own task", "RecordActivityTaskHeartbeat", "fleet", &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: taskToken(t, "instance-offer-1")}, allowed},
		{"complete another workflow's task", "RespondActivityTaskCompleted", "fleet", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: taskToken(t, "fleet-scaler")}, refused},
		{"heartbeat another workflow's task", "RecordActivityTaskHeartbeat", "fleet", &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: taskToken(t, "instance-offer-2")}, refused},
		{"garbage task token", "RespondActivityTaskCompleted", "fleet", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: []byte{0xff, 0xff, 0xff}}, refused},
		{"forged (unsealed) token of own workflow", "RespondActivityTaskCompleted", "fleet", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: rawToken(t, "instance-offer-1")}, refused},
		{"forged heartbeat of own workflow", "RecordActivityTaskHeartbeat", "fleet", &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: rawToken(t, "instance-offer-1")}, refused},
		{"token sealed for another host", "RespondActivityTaskCompleted", "fleet", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: seal(sealKey([]byte(testKey)), "gpufleet-b", rawToken(t, "instance-offer-1"))}, refused},
		{"task token naming only the activity id", "RespondActivityTaskCompleted", "fleet", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: byActivityID(t, "instance-offer-1")}, refused},
		{"complete by id", "RespondActivityTaskCompletedById", "fleet", &workflowservice.RespondActivityTaskCompletedByIdRequest{Namespace: "fleet", WorkflowId: "instance-offer-1"}, refused},
		{"heartbeat by id", "RecordActivityTaskHeartbeatById", "fleet", &workflowservice.RecordActivityTaskHeartbeatByIdRequest{Namespace: "fleet", WorkflowId: "instance-offer-1"}, refused},
		{"worker heartbeat on own queue", "RecordWorkerHeartbeat", "fleet", &workflowservice.RecordWorkerHeartbeatRequest{Namespace: "fleet", WorkerHeartbeat: []*workerpb.WorkerHeartbeat{{TaskQueue: "host/gpufleet-a"}}}, allowed},
		{"worker heartbeat on the control queue", "RecordWorkerHeartbeat", "fleet", &workflowservice.RecordWorkerHeartbeatRequest{Namespace: "fleet", WorkerHeartbeat: []*workerpb.WorkerHeartbeat{{TaskQueue: "gpu-fleet-control"}}}, refused},
		{"shutdown without sticky queue", "ShutdownWorker", "fleet", &workflowservice.ShutdownWorkerRequest{Namespace: "fleet"}, allowed},
		{"shutdown of a sticky queue", "ShutdownWorker", "fleet", &workflowservice.ShutdownWorkerRequest{Namespace: "fleet", StickyTaskQueue: "control-sticky"}, refused},
		{"start workflow", "StartWorkflowExecution", "fleet", &workflowservice.StartWorkflowExecutionRequest{Namespace: "fleet"}, refused},
		{"signal workflow", "SignalWorkflowExecution", "fleet", &workflowservice.SignalWorkflowExecutionRequest{Namespace: "fleet"}, refused},
		{"terminate workflow", "TerminateWorkflowExecution", "fleet", &workflowservice.TerminateWorkflowExecutionRequest{Namespace: "fleet"}, refused},
		{"cancel workflow", "RequestCancelWorkflowExecution", "fleet", &workflowservice.RequestCancelWorkflowExecutionRequest{Namespace: "fleet"}, refused},
		{"list workflows", "ListWorkflowExecutions", "fleet", &workflowservice.ListWorkflowExecutionsRequest{Namespace: "fleet"}, refused},
		{"read history", "GetWorkflowExecutionHistory", "fleet", &workflowservice.GetWorkflowExecutionHistoryRequest{Namespace: "fleet"}, refused},
		{"describe task queue", "DescribeTaskQueue", "fleet", &workflowservice.DescribeTaskQueueRequest{Namespace: "fleet"}, refused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(t, a, c, tc.method, tc.ns, tc.req); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	// The operator and admin services are not the workflow service at all.
	r, _ := a.Authorize(context.Background(), c, &authorization.CallTarget{APIName: api.OperatorServicePrefix + "ListSearchAttributes", Namespace: "fleet"})
	if r.Decision != refused {
		t.Fatal("a host reached the operator service")
	}
}

func TestControlCertificateMayDoAnything(t *testing.T) {
	m, a := setup(t, false)
	c, err := m.GetClaims(&authorization.AuthInfo{TLSSubject: subject("gpu-fleet-control")})
	if err != nil {
		t.Fatal(err)
	}
	if decide(t, a, c, "StartWorkflowExecution", "fleet", &workflowservice.StartWorkflowExecutionRequest{}) != allowed {
		t.Fatal("control refused")
	}
	r, _ := a.Authorize(context.Background(), c, &authorization.CallTarget{APIName: api.OperatorServicePrefix + "AddSearchAttributes"})
	if r.Decision != allowed {
		t.Fatal("control refused the operator service")
	}
}

func TestOtherCertificatesAndAnonymousCalls(t *testing.T) {
	m, strict := setup(t, false)
	_, loose := setup(t, true)
	front, err := m.GetClaims(&authorization.AuthInfo{TLSSubject: subject("gpu-fleet-host-front")})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []*Authorizer{strict, loose} {
		if decide(t, a, front, "PollActivityTaskQueue", "fleet", &workflowservice.PollActivityTaskQueueRequest{}) != refused {
			t.Fatal("a certificate that is not the control plane's, without a token, was let in")
		}
	}
	if decide(t, strict, nil, "StartWorkflowExecution", "fleet", &workflowservice.StartWorkflowExecutionRequest{}) != refused {
		t.Fatal("anonymous call allowed by default")
	}
	if decide(t, strict, nil, "GetSystemInfo", "", &workflowservice.GetSystemInfoRequest{}) != allowed {
		t.Fatal("the health check is open to all, as upstream's")
	}
	if decide(t, loose, nil, "StartWorkflowExecution", "fleet", &workflowservice.StartWorkflowExecutionRequest{}) != allowed {
		t.Fatal("GPU_FLEET_ANONYMOUS=control refused an anonymous call")
	}
}

func TestBadBearerCredentialsAreErrors(t *testing.T) {
	m, _ := setup(t, true)
	expired := mine
	expired.Expiry = t0
	tok, _ := Mint([]byte(testKey), expired)
	forged, _ := Mint([]byte("some-other-key-of-32-characters-or-more"), mine)
	for name, header := range map[string]string{
		"expired":               "Bearer " + tok,
		"forged":                "Bearer " + forged,
		"legacy shared key":     "Bearer 0123456789abcdef0123456789abcdef",
		"not bearer":            "Basic abc",
		"with control cert too": "Bearer " + forged,
	} {
		t.Run(name, func(t *testing.T) {
			// Even with the control plane's certificate: a bearer header is judged as a host token.
			if c, err := m.GetClaims(&authorization.AuthInfo{AuthToken: header, TLSSubject: subject("gpu-fleet-control")}); err == nil {
				t.Fatalf("accepted as %+v", c)
			}
		})
	}
	noKey := NewClaimMapper(Config{}, nil)
	good, _ := Mint([]byte(testKey), HostToken{"fleet", "gpufleet-a", "wf", time.Now().Add(time.Hour)})
	if _, err := noKey.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer " + good}); err == nil {
		t.Fatal("a server without a key accepted a host token")
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ConfigFromEnv(env(map[string]string{
		"GPU_FLEET_HOST_TOKEN_KEY":   testKey,
		"GPU_FLEET_CONTROL_SUBJECTS": "gpu-fleet-control, ops ",
		"GPU_FLEET_ANONYMOUS":        "control",
	}))
	if err != nil || !c.ControlSubjects["ops"] || !c.ControlSubjects["gpu-fleet-control"] || !c.AnonymousIsControl || string(c.HostTokenKey) != testKey {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := ConfigFromEnv(env(map[string]string{"GPU_FLEET_HOST_TOKEN_KEY": "short"})); err == nil {
		t.Fatal("short key accepted")
	}
	if _, err := ConfigFromEnv(env(map[string]string{"GPU_FLEET_ANONYMOUS": "admin"})); err == nil {
		t.Fatal("unknown anonymous mode accepted")
	}
	if c, _ := ConfigFromEnv(env(nil)); c.AnonymousIsControl || len(c.ControlSubjects) != 0 {
		t.Fatal("defaults are not strict")
	}
}
