package hostauth

// Attacks a hostile host made with its own token against our two-node cluster (issue 43), each at the
// authorizer, claim mapper or interceptor that now stops it.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	deploymentpb "go.temporal.io/api/deployment/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// subject is a certificate subject as x509 parses it: every attribute in Names, CommonName the last CN.
func subject(cns ...string) *pkix.Name {
	var seq pkix.RDNSequence
	for _, cn := range cns {
		seq = append(seq, pkix.RelativeDistinguishedNameSET{{Type: oidCommonName, Value: cn}})
	}
	var n pkix.Name
	n.FillFromRDNSequence(&seq)
	return &n
}

func ownPoll(opts func(*workflowservice.PollActivityTaskQueueRequest)) *workflowservice.PollActivityTaskQueueRequest {
	r := &workflowservice.PollActivityTaskQueueRequest{Namespace: "fleet", TaskQueue: &taskqueuepb.TaskQueue{Name: "host/gpufleet-a"}}
	opts(r)
	return r
}

// H1: an own-queue poll with deployment options registered a worker deployment and version, and the
// server started two system workflows for each. The authorizer refuses the poll before matching sees it.
func TestHostMayNotRegisterAWorkerDeployment(t *testing.T) {
	m, a := setup(t, false)
	host := hostClaims(t, m, mine)
	versioned := &deploymentpb.WorkerDeploymentOptions{DeploymentName: "evil", BuildId: "b1",
		WorkerVersioningMode: enumspb.WORKER_VERSIONING_MODE_VERSIONED}
	cases := []struct {
		name string
		req  *workflowservice.PollActivityTaskQueueRequest
		want authorization.Decision
	}{
		{"versioned deployment", ownPoll(func(r *workflowservice.PollActivityTaskQueueRequest) { r.DeploymentOptions = versioned }), refused},
		{"named deployment, unversioned", ownPoll(func(r *workflowservice.PollActivityTaskQueueRequest) {
			r.DeploymentOptions = &deploymentpb.WorkerDeploymentOptions{DeploymentName: "evil", BuildId: "b1"}
		}), refused},
		{"build-id versioning", ownPoll(func(r *workflowservice.PollActivityTaskQueueRequest) {
			r.WorkerVersionCapabilities = &commonpb.WorkerVersionCapabilities{BuildId: "b1", UseVersioning: true}
		}), refused},
		{"deployment series", ownPoll(func(r *workflowservice.PollActivityTaskQueueRequest) {
			r.WorkerVersionCapabilities = &commonpb.WorkerVersionCapabilities{BuildId: "b1", DeploymentSeriesName: "evil"}
		}), refused},
		{"unversioned build id (the SDK's stamp)", ownPoll(func(r *workflowservice.PollActivityTaskQueueRequest) {
			r.WorkerVersionCapabilities = &commonpb.WorkerVersionCapabilities{BuildId: "b1"}
		}), allowed},
		{"plain poll", ownPoll(func(*workflowservice.PollActivityTaskQueueRequest) {}), allowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(t, a, host, "PollActivityTaskQueue", "fleet", tc.req); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	control, _ := m.GetClaims(&authorization.AuthInfo{TLSSubject: subject("gpu-fleet-control")})
	poll := ownPoll(func(r *workflowservice.PollActivityTaskQueueRequest) { r.DeploymentOptions = versioned })
	poll.TaskQueue.Name = "gpu-fleet-control"
	if decide(t, a, control, "PollActivityTaskQueue", "fleet", poll) != allowed {
		t.Fatal("the control plane lost Worker Versioning")
	}
}

// H4: Go's pkix.Name.CommonName is the last CN, so /CN=nobody/CN=gpu-fleet-control was the control plane.
func TestControlIdentityIsOneCommonName(t *testing.T) {
	m, a := setup(t, false)
	for name, tc := range map[string]struct {
		subject *pkix.Name
		control bool
	}{
		"single CN":                {subject("gpu-fleet-control"), true},
		"two CNs, control last":    {subject("nobody", "gpu-fleet-control"), false},
		"two CNs, control first":   {subject("gpu-fleet-control", "nobody"), false},
		"the same CN twice":        {subject("gpu-fleet-control", "gpu-fleet-control"), false},
		"CommonName without Names": {&pkix.Name{CommonName: "gpu-fleet-control"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := m.GetClaims(&authorization.AuthInfo{TLSSubject: tc.subject})
			if err != nil {
				t.Fatal(err)
			}
			got := decide(t, a, c, "StartWorkflowExecution", "fleet", &workflowservice.StartWorkflowExecutionRequest{}) == allowed
			if got != tc.control {
				t.Fatalf("control plane: got %v, want %v", got, tc.control)
			}
		})
	}
}

// H2: polls and calls are limited per namespace upstream; one token's 150 polls made the control
// worker's poll fail. Each token now gets its own few polls and its own call rate.
func TestOneHostsPollFloodLeavesOthersPolling(t *testing.T) {
	m, a := setup(t, false)
	hostA := hostClaims(t, m, mine)
	other := mine
	other.Label, other.WorkflowID = "gpufleet-b", "instance-offer-2"
	hostB := hostClaims(t, m, other)
	control, _ := m.GetClaims(&authorization.AuthInfo{TLSSubject: subject("gpu-fleet-control")})

	release := make(chan struct{})
	var mu sync.Mutex
	reached := map[string]int{}
	handler := func(ctx context.Context, _ any) (any, error) {
		mu.Lock()
		reached[subjectOf(ctx)]++
		mu.Unlock()
		<-release // a long poll: held until a task comes or it times out
		return &workflowservice.PollActivityTaskQueueResponse{}, nil
	}
	info := &grpc.UnaryServerInfo{FullMethod: api.WorkflowServicePrefix + "PollActivityTaskQueue"}
	poll := func(c *authorization.Claims) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := a.LimitHosts(context.WithValue(context.Background(), authorization.MappedClaims, c), nil, info, handler)
			done <- err
		}()
		return done
	}
	var flood []chan error
	for range 150 {
		flood = append(flood, poll(hostA))
	}
	refusedPolls := 0
	for _, d := range flood {
		select {
		case err := <-d:
			var re *serviceerror.ResourceExhausted
			if !errors.As(err, &re) {
				t.Fatalf("an extra poll got %v, want RESOURCE_EXHAUSTED", err)
			}
			refusedPolls++
		case <-time.After(200 * time.Millisecond):
		}
	}
	if want := 150 - DefaultLimits.MaxPolls; refusedPolls != want {
		t.Fatalf("%d of host a's polls refused, want %d", refusedPolls, want)
	}
	others := []chan error{poll(hostB), poll(control)}
	deadline := time.Now().Add(2 * time.Second)
	for waiting(&mu, reached, "host:gpufleet-b", "gpu-fleet-control") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	for _, d := range others {
		if err := <-d; err != nil {
			t.Fatalf("another caller's poll failed during the flood: %v", err)
		}
	}
	if reached["host:gpufleet-a"] != DefaultLimits.MaxPolls {
		t.Fatalf("host a had %d polls in matching, want %d", reached["host:gpufleet-a"], DefaultLimits.MaxPolls)
	}
	// Its polls ended: the slots are free again.
	if err := <-poll(hostA); err != nil {
		t.Fatalf("a poll after the flood: %v", err)
	}
}

func subjectOf(ctx context.Context) string {
	c, _ := ctx.Value(authorization.MappedClaims).(*authorization.Claims)
	return c.Subject
}

func waiting(mu *sync.Mutex, reached map[string]int, subjects ...string) bool {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range subjects {
		if reached[s] == 0 {
			return true
		}
	}
	return false
}

func TestOneHostsCallFloodLeavesOthersCalling(t *testing.T) {
	m, a := setup(t, false)
	hostA := hostClaims(t, m, mine)
	other := mine
	other.Label, other.WorkflowID = "gpufleet-b", "instance-offer-2"
	hostB := hostClaims(t, m, other)
	control, _ := m.GetClaims(&authorization.AuthInfo{TLSSubject: subject("gpu-fleet-control")})
	describe := &workflowservice.DescribeNamespaceRequest{Namespace: "fleet"}
	passed := 0
	for range 1000 {
		r, err := a.Authorize(context.Background(), hostA, &authorization.CallTarget{
			APIName: api.WorkflowServicePrefix + "DescribeNamespace", Namespace: "fleet", Request: describe})
		var re *serviceerror.ResourceExhausted
		switch {
		case err == nil && r.Decision == allowed:
			passed++
		case !errors.As(err, &re):
			t.Fatalf("a call over the rate got %v, want RESOURCE_EXHAUSTED", err)
		}
	}
	if passed < DefaultLimits.Burst || passed > DefaultLimits.Burst+2 {
		t.Fatalf("host a made %d of 1000 calls at once, want its burst of %d", passed, DefaultLimits.Burst)
	}
	hb := &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: taskToken(t, "instance-offer-2")}
	hb.TaskToken = seal(sealKey([]byte(testKey)), "gpufleet-b", rawToken(t, "instance-offer-2"))
	if decide(t, a, hostB, "RecordActivityTaskHeartbeat", "fleet", hb) != allowed {
		t.Fatal("another host's heartbeat was refused during the flood")
	}
	for range 100 {
		if decide(t, a, control, "StartWorkflowExecution", "fleet", &workflowservice.StartWorkflowExecutionRequest{}) != allowed {
			t.Fatal("the control plane was refused during the flood")
		}
	}
}

// H2 and H5: 1.9 MB heartbeats (under the server's 2 MB) wrote ~35 MB/s. A host's heartbeat is capped
// far lower, and one over the cap fails its step as the server's own limit would, with the server's
// reason: the workflow reads that as the host's payload (HostPayloadTooLarge), not as ours.
func TestHostHeartbeatOverItsCapFailsItsStep(t *testing.T) {
	m, a := setup(t, false)
	host := hostClaims(t, m, mine)
	hb := func(n int) *workflowservice.RecordActivityTaskHeartbeatRequest {
		return &workflowservice.RecordActivityTaskHeartbeatRequest{Namespace: "fleet", TaskToken: taskToken(t, "instance-offer-1"),
			Identity: "gpu-host", Details: &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: make([]byte, n)}}}}
	}
	srv := &recordingServer{}
	info := &grpc.UnaryServerInfo{FullMethod: api.WorkflowServicePrefix + "RecordActivityTaskHeartbeat", Server: srv}
	ctx := context.WithValue(context.Background(), authorization.MappedClaims, host)
	passed := 0
	handler := func(context.Context, any) (any, error) {
		passed++
		return &workflowservice.RecordActivityTaskHeartbeatResponse{}, nil
	}
	if _, err := a.LimitHosts(ctx, hb(512), info, handler); err != nil || passed != 1 || srv.failed != nil {
		t.Fatalf("a small heartbeat: err %v, passed %d, failed %v", err, passed, srv.failed)
	}
	resp, err := a.LimitHosts(ctx, hb(1_900_000), info, handler)
	if err != nil || passed != 1 {
		t.Fatalf("a 1.9 MB heartbeat reached the server (passed %d, err %v)", passed, err)
	}
	if r, _ := resp.(*workflowservice.RecordActivityTaskHeartbeatResponse); !r.GetCancelRequested() {
		t.Fatal("the host was not told its step is over")
	}
	f := srv.failed
	if f == nil || f.GetFailure().GetMessage() != HeartbeatExceedsLimit || !f.GetFailure().GetServerFailureInfo().GetNonRetryable() ||
		string(f.GetTaskToken()) != string(hb(0).GetTaskToken()) || f.GetNamespace() != "fleet" {
		t.Fatalf("the step was not failed as the server fails an oversized heartbeat: %v", f)
	}
	// The control plane's heartbeats are the server's to judge.
	control, _ := m.GetClaims(&authorization.AuthInfo{TLSSubject: subject("gpu-fleet-control")})
	srv.failed = nil
	if _, err := a.LimitHosts(context.WithValue(context.Background(), authorization.MappedClaims, control), hb(1_900_000), info, handler); err != nil || passed != 2 || srv.failed != nil {
		t.Fatalf("a control heartbeat was held: %v", err)
	}
}

type recordingServer struct {
	workflowservice.UnimplementedWorkflowServiceServer
	failed *workflowservice.RespondActivityTaskFailedRequest
}

func (s *recordingServer) RespondActivityTaskFailed(_ context.Context, r *workflowservice.RespondActivityTaskFailedRequest) (*workflowservice.RespondActivityTaskFailedResponse, error) {
	s.failed = r
	return &workflowservice.RespondActivityTaskFailedResponse{}, nil
}

type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s fakeStream) Context() context.Context { return s.ctx }

func streamCtx(cert *pkix.Name, bearer string) context.Context {
	ctx := context.Background()
	if cert != nil {
		state := tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: *cert}}}}
		ctx = peer.NewContext(ctx, &peer.Peer{AuthInfo: credentials.TLSInfo{State: state}})
	}
	if bearer != "" {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", bearer))
	}
	return ctx
}

// H3: upstream's stream chain is telemetry only: with the front's certificate and a junk bearer, the
// admin replication stream's handler ran and reflection answered.
func TestStreamsAreAuthorizedLikeUnaryCalls(t *testing.T) {
	m, strict := setup(t, false)
	_, loose := setup(t, true)
	tok, _ := Mint([]byte(testKey), mine)
	replication := "/temporal.server.api.adminservice.v1.AdminService/StreamWorkflowReplicationMessages"
	reflection := "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
	health := "/grpc.health.v1.Health/Watch"
	front := subject("gpu-fleet-host-front")
	cases := []struct {
		name   string
		a      *Authorizer
		method string
		ctx    context.Context
		runs   bool
	}{
		{"front cert, junk bearer, replication", strict, replication, streamCtx(front, "Bearer junk"), false},
		{"front cert, junk bearer, reflection", strict, reflection, streamCtx(front, "Bearer junk"), false},
		{"front cert alone", strict, reflection, streamCtx(front, ""), false},
		{"valid host token", strict, replication, streamCtx(front, "Bearer "+tok), false},
		{"two-CN certificate", strict, replication, streamCtx(subject("nobody", "gpu-fleet-control"), ""), false},
		{"anonymous", strict, reflection, streamCtx(nil, ""), false},
		{"control certificate", strict, replication, streamCtx(subject("gpu-fleet-control"), ""), true},
		{"anonymous where anonymous is control", loose, reflection, streamCtx(nil, ""), true},
		{"health watch, anyone", strict, health, streamCtx(nil, "Bearer junk"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			err := tc.a.StreamGuard(m)(nil, fakeStream{ctx: tc.ctx}, &grpc.StreamServerInfo{FullMethod: tc.method},
				func(any, grpc.ServerStream) error { ran = true; return nil })
			if ran != tc.runs {
				t.Fatalf("handler ran: %v, want %v (err %v)", ran, tc.runs, err)
			}
			if !tc.runs && status.Code(err) != codes.PermissionDenied {
				t.Fatalf("got %v, want PERMISSION_DENIED", err)
			}
		})
	}
}

// No revocation and no server-side lifetime: a destroyed rental's token worked for its 90 days, and an
// expiry of 2^53-1 s was accepted.
func TestTokenLifetimeAndRevocation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "revoked-hosts")
	cfg := Config{HostTokenKey: []byte(testKey), MaxTokenLifetime: 92 * 24 * time.Hour, RevokedFile: file}
	m := NewClaimMapper(cfg, func() time.Time { return t0 })
	claims := func(h HostToken) error {
		tok, err := Mint([]byte(testKey), h)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer " + tok})
		return err
	}
	forever := mine
	forever.Expiry = time.Unix(1<<53-1, 0)
	if err := claims(forever); !errors.Is(err, ErrTooLong) {
		t.Fatalf("a token for 2^53-1 s: %v", err)
	}
	ninety := mine
	ninety.Expiry = t0.Add(90 * 24 * time.Hour)
	if err := claims(ninety); err != nil {
		t.Fatalf("a 90-day token: %v", err)
	}
	if _, err := m.Revoked().Reload(); err != nil {
		t.Fatalf("a missing file is an empty list: %v", err)
	}
	if err := os.WriteFile(file, []byte("# retired rentals\ngpufleet-z\ngpufleet-a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := m.Revoked().Reload(); err != nil || !changed {
		t.Fatalf("reload: changed %v, %v", changed, err)
	}
	if err := claims(ninety); !errors.Is(err, ErrRevoked) {
		t.Fatalf("a retired rental's token: %v", err)
	}
	other := mine
	other.Label = "gpufleet-b"
	if err := claims(other); err != nil {
		t.Fatalf("a live rental's token: %v", err)
	}
	// An unreadable file keeps the list it had: a broken exporter does not bring retired tokens back.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(file, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Revoked().Reload(); err == nil || !m.Revoked().Has("gpufleet-a") {
		t.Fatalf("an unreadable list dropped the labels (%v)", err)
	}
}

// 16 strings verified as one token: the unused low bits of the tag's last base64 character.
func TestTokenHasOneSpelling(t *testing.T) {
	tok, _ := Mint([]byte(testKey), mine)
	last := tok[len(tok)-1]
	variants := 0
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") {
		if c == last {
			continue
		}
		if _, err := Verify([]byte(testKey), tok[:len(tok)-1]+string(c), t0); err == nil {
			variants++
		}
	}
	if variants != 0 {
		t.Fatalf("%d other spellings of one token verify", variants)
	}
}
