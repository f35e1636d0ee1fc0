package hostauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
)

// A task token is a plain protobuf anyone can write: naming a workflow, run and scheduled event is
// enough for the history service. So the server seals each task token it hands a host (Seal, on the
// poll's answer) with a MAC over the token and the host's label, appended as a protobuf field no
// reader of the token knows (and so skips), and the authorizer takes a host's answer or heartbeat only
// with a sealed token: a host answers only tasks it was given from its own queue, not a forged token
// for one of its lifecycle's control-queue activities. Stateless, so any node checks any node's seal.
const sealField = 1000

var sealPrefix = protowire.AppendTag(nil, sealField, protowire.BytesType)

const sealBytes = 16

func sealKey(hostTokenKey []byte) []byte {
	m := hmac.New(sha256.New, hostTokenKey)
	m.Write([]byte("gpu-fleet task-token seal"))
	return m.Sum(nil)
}

func sealMAC(key []byte, label string, token []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write([]byte{0})
	m.Write(token)
	return m.Sum(nil)[:sealBytes]
}

func seal(key []byte, label string, token []byte) []byte {
	out := append(append([]byte{}, token...), sealPrefix...)
	return protowire.AppendBytes(out, sealMAC(key, label, token))
}

// unseal returns the token as the server made it, and whether its seal is this host's.
func unseal(key []byte, label string, sealed []byte) ([]byte, bool) {
	n := len(sealPrefix) + protowire.SizeBytes(sealBytes)
	if len(key) == 0 || len(sealed) < n {
		return nil, false
	}
	token := sealed[:len(sealed)-n]
	return token, hmac.Equal(sealed, seal(key, label, token))
}

// Seal is a frontend interceptor (temporal.WithChainedFrontendGrpcInterceptors): it runs after the
// authorizer, sees the claims it mapped, and seals the task token of a host's activity poll.
func (a *Authorizer) Seal(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err != nil || info.FullMethod != api.WorkflowServicePrefix+"PollActivityTaskQueue" {
		return resp, err
	}
	c, _ := ctx.Value(authorization.MappedClaims).(*authorization.Claims)
	if c == nil {
		return resp, err
	}
	h, isHost := c.Extensions.(*HostToken)
	if r, ok := resp.(*workflowservice.PollActivityTaskQueueResponse); isHost && ok && len(r.GetTaskToken()) > 0 {
		r.TaskToken = seal(a.sealKey, h.Label, r.TaskToken)
	}
	return resp, err
}
