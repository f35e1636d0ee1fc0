package hostauth

import (
	"crypto/x509/pkix"

	"go.temporal.io/server/common/authorization"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// streamHealth are the streams open to every caller, as the unary health checks are.
var streamHealth = map[string]bool{
	healthpb.Health_Watch_FullMethodName: true,
	healthpb.Health_Check_FullMethodName: true,
}

// StreamGuard authorizes the frontend's streaming calls as the unary ones are: upstream's stream chain
// is telemetry only, so without it any certificate of the CA reached the admin replication stream and
// server reflection. Only the control plane (and anonymous calls where GPU_FLEET_ANONYMOUS=control)
// may open a stream other than the health watch; a bearer header must be a valid host token, which
// grants no stream. cmd/server adds it to the frontend's gRPC server.
func (a *Authorizer) StreamGuard(m *ClaimMapper) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if streamHealth[info.FullMethod] {
			return handler(srv, ss)
		}
		c, err := streamClaims(m, ss)
		target := &authorization.CallTarget{APIName: info.FullMethod}
		switch {
		case err != nil:
			a.refuse("invalid bearer", target, err.Error())
			return status.Error(codes.PermissionDenied, authorization.RequestUnauthorized)
		case c == nil && a.anonymousIsControl, c != nil && c.System&authorization.RoleAdmin != 0:
			return handler(srv, ss)
		}
		subject := "anonymous"
		if c != nil {
			subject = c.Subject
		}
		r := a.refuse(subject, target, "only the control plane may open this stream")
		// A status, not a serviceerror: the stream chain has no interceptor that converts one.
		return status.Error(codes.PermissionDenied, authorization.RequestUnauthorized+" "+r.Reason)
	}
}

// streamClaims maps the stream's credentials as the unary authorization interceptor does: the verified
// client certificate's subject and the authorization header. Nil without either.
func streamClaims(m *ClaimMapper, ss grpc.ServerStream) (*authorization.Claims, error) {
	ctx := ss.Context()
	var subject *pkix.Name
	if cert := authorization.PeerCert(authorization.TLSInfoFromContext(ctx)); cert != nil {
		subject = &cert.Subject
	}
	var header string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("authorization"); len(v) > 0 {
			header = v[0]
		}
	}
	if subject == nil && header == "" {
		return nil, nil
	}
	return m.GetClaims(&authorization.AuthInfo{AuthToken: header, TLSSubject: subject})
}
