package main

import (
	"go.temporal.io/server/chasm"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.temporal.io/server/common/pprof"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/common/resource"
	"go.temporal.io/server/service/frontend"
	"go.temporal.io/server/temporal"
	"go.uber.org/fx"
	"google.golang.org/grpc"
)

// topLevelModule is upstream's temporal.TopLevelModule (v1.29.1) with one provider changed: the
// frontend's, whose gRPC server also gets our stream interceptor. Upstream's options add only unary
// frontend interceptors (temporal.WithChainedFrontendGrpcInterceptors); its stream chain is telemetry.
func topLevelModule(stream grpc.StreamServerInterceptor) fx.Option {
	return fx.Options(
		fx.Provide(
			temporal.NewServerFxImpl,
			temporal.ServerOptionsProvider,
			resource.ArchivalMetadataProvider,
			temporal.TaskCategoryRegistryProvider,
			temporal.PersistenceFactoryProvider,
			temporal.HistoryServiceProvider,
			temporal.MatchingServiceProvider,
			frontendServiceProvider(stream),
			temporal.InternalFrontendServiceProvider,
			temporal.WorkerServiceProvider,
			temporal.ApplyClusterMetadataConfigProvider,
		),
		dynamicconfig.Module,
		pprof.Module,
		temporal.TraceExportModule,
		chasm.Module,
		temporal.FxLogAdapter,
		fx.Invoke(temporal.ServerLifetimeHooks),
	)
}

// frontendServiceProvider is upstream's (genericFrontendServiceProvider for the public frontend) with the
// stream interceptor appended to the gRPC server's options.
func frontendServiceProvider(stream grpc.StreamServerInterceptor) func(temporal.ServiceProviderParamsCommon) (temporal.ServicesGroupOut, error) {
	return func(params temporal.ServiceProviderParamsCommon) (temporal.ServicesGroupOut, error) {
		serviceName := primitives.FrontendService
		if _, ok := params.ServiceNames[serviceName]; !ok {
			params.Logger.Info("Service is not requested, skipping initialization.", tag.Service(serviceName))
			return temporal.ServicesGroupOut{}, nil
		}
		app := fx.New(
			params.GetCommonServiceOptions(serviceName),
			fx.Supply(params.CustomFrontendInterceptors),
			fx.Decorate(func() authorization.ClaimMapper { return params.ClaimMapper }),
			fx.Decorate(func() log.SnTaggedLogger { return log.With(params.Logger, tag.Service(serviceName)) }),
			fx.Decorate(func(so frontend.GrpcServerOptions) frontend.GrpcServerOptions {
				so.Options = append(so.Options, grpc.ChainStreamInterceptor(stream))
				return so
			}),
			frontend.Module,
		)
		return temporal.NewService(app, serviceName, params.Logger), app.Err()
	}
}
