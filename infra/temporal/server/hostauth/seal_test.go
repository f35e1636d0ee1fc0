package hostauth

import (
	"bytes"
	"context"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	tokenspb "go.temporal.io/server/api/token/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/grpc"
)

func TestSealedTokenReadsAsTheServersToken(t *testing.T) {
	raw := rawToken(t, "instance-offer-1")
	sealed := seal(sealKey([]byte(testKey)), "gpufleet-a", raw)
	// The frontend and the history service read the sealed token as the one they made: the seal is a
	// field they do not know.
	var got tokenspb.Task
	if err := got.Unmarshal(sealed); err != nil {
		t.Fatal(err)
	}
	if got.GetWorkflowId() != "instance-offer-1" || got.GetScheduledEventId() != 5 || got.GetRunId() != "run" {
		t.Fatalf("sealed token reads as %+v", &got)
	}
	back, ok := unseal(sealKey([]byte(testKey)), "gpufleet-a", sealed)
	if !ok || !bytes.Equal(back, raw) {
		t.Fatal("a seal of this host does not unseal")
	}
	for name, tc := range map[string]struct {
		key   []byte
		label string
		token []byte
	}{
		"other label":   {sealKey([]byte(testKey)), "gpufleet-b", sealed},
		"other key":     {sealKey([]byte("another-key-of-at-least-32-characters!!")), "gpufleet-a", sealed},
		"unsealed":      {sealKey([]byte(testKey)), "gpufleet-a", raw},
		"no key":        {nil, "gpufleet-a", sealed},
		"short":         {sealKey([]byte(testKey)), "gpufleet-a", []byte{1, 2}},
		"changed token": {sealKey([]byte(testKey)), "gpufleet-a", append([]byte{0x08}, sealed[1:]...)},
	} {
		if _, ok := unseal(tc.key, tc.label, tc.token); ok {
			t.Errorf("%s: unsealed", name)
		}
	}
}

func TestSealInterceptorSealsOnlyHostPolls(t *testing.T) {
	m, a := setup(t, false)
	host := hostClaims(t, m, mine)
	control := &authorization.Claims{Subject: "gpu-fleet-control", System: authorization.RoleAdmin}
	raw := rawToken(t, "instance-offer-1")
	poll := &grpc.UnaryServerInfo{FullMethod: api.WorkflowServicePrefix + "PollActivityTaskQueue"}
	answer := func(_ context.Context, _ any) (any, error) {
		return &workflowservice.PollActivityTaskQueueResponse{TaskToken: append([]byte{}, raw...)}, nil
	}
	call := func(c *authorization.Claims, info *grpc.UnaryServerInfo) []byte {
		ctx := context.WithValue(context.Background(), authorization.MappedClaims, c)
		resp, err := a.Seal(ctx, &workflowservice.PollActivityTaskQueueRequest{}, info, answer)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*workflowservice.PollActivityTaskQueueResponse).GetTaskToken()
	}
	sealed := call(host, poll)
	if decide(t, a, host, "RespondActivityTaskCompleted", "fleet", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: sealed}) != allowed {
		t.Fatal("the host's answer with the token it was handed was refused")
	}
	if !bytes.Equal(call(control, poll), raw) || !bytes.Equal(call(nil, poll), raw) {
		t.Fatal("a control or anonymous poll's token was changed")
	}
	other := &grpc.UnaryServerInfo{FullMethod: api.WorkflowServicePrefix + "PollWorkflowTaskQueue"}
	if !bytes.Equal(call(host, other), raw) {
		t.Fatal("a response other than an activity poll's was changed")
	}
	empty := func(context.Context, any) (any, error) { return &workflowservice.PollActivityTaskQueueResponse{}, nil }
	ctx := context.WithValue(context.Background(), authorization.MappedClaims, host)
	resp, _ := a.Seal(ctx, nil, poll, empty)
	if len(resp.(*workflowservice.PollActivityTaskQueueResponse).GetTaskToken()) != 0 {
		t.Fatal("an empty poll got a token")
	}
}
