// The gpu-fleet Temporal server: go.temporal.io/server/cmd/server of the pinned release (same flags,
// config loading and start), with our authorizer and claim mapper (../../hostauth) in place of the
// config's. ../../../ensure-server.ts builds it as `temporal-server`.
package main

import (
	"fmt"
	"os"
	"path"
	"text/template"
	"time"
	_ "time/tzdata" // embed tzdata as a fallback

	"github.com/urfave/cli/v2"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/build"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/headers"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/mysql"      // needed to load mysql plugin
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // needed to load postgresql plugin
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"     // needed to load sqlite plugin
	"go.temporal.io/server/temporal"
	"gpufleet.local/temporal-server/hostauth"
)

func main() {
	_ = buildCLI().Run(os.Args)
}

func buildCLI() *cli.App {
	app := cli.NewApp()
	app.Name = "temporal"
	app.Usage = "Temporal server (gpu-fleet build: host-token authorizer)"
	app.Version = headers.ServerVersion
	app.ArgsUsage = " "
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "root", Aliases: []string{"r"}, Value: ".", Usage: "root directory of execution environment", EnvVars: []string{config.EnvKeyRoot}},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: "config", Usage: "config dir path relative to root", EnvVars: []string{config.EnvKeyConfigDir}},
		&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Value: "development", Usage: "runtime environment", EnvVars: []string{config.EnvKeyEnvironment}},
		&cli.StringFlag{Name: "zone", Aliases: []string{"az"}, Usage: "availability zone", EnvVars: []string{config.EnvKeyAvailabilityZone, config.EnvKeyAvailabilityZoneTypo}},
		// Accepted for the upstream command line; this build always has an authorizer.
		&cli.BoolFlag{Name: "allow-no-auth", Usage: "ignored (this build always authorizes)", EnvVars: []string{config.EnvKeyAllowNoAuth}},
	}
	app.Commands = []*cli.Command{
		{
			Name:      "validate-dynamic-config",
			Usage:     "Validate a dynamic config file[s] with known keys and types",
			ArgsUsage: "<file> ...",
			Action:    validateDynamicConfig,
		},
		{
			Name:  "render-config",
			Usage: "Render server config template",
			Action: func(c *cli.Context) error {
				cfg, err := config.LoadConfig(c.String("env"), c.String("config"), c.String("zone"))
				if err != nil {
					return cli.Exit(fmt.Errorf("Unable to load configuration: %w", err), 1)
				}
				fmt.Println(cfg.String())
				return nil
			},
		},
		{
			Name:  "start",
			Usage: "Start Temporal server",
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "service", Aliases: []string{"svc"}, Value: cli.NewStringSlice(temporal.DefaultServices...), Usage: "service(s) to start"},
			},
			Before: func(c *cli.Context) error {
				if c.Args().Len() > 0 {
					return cli.Exit("ERROR: start command doesn't support arguments. Use --service flag instead.", 1)
				}
				return nil
			},
			Action: start,
		},
	}
	return app
}

func start(c *cli.Context) error {
	cfg, err := config.LoadConfig(c.String("env"), path.Join(c.String("root"), c.String("config")), c.String("zone"))
	if err != nil {
		return cli.Exit(fmt.Sprintf("Unable to load configuration: %v.", err), 1)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	logger.Info("Build info.",
		tag.NewStringTag("go-version", build.InfoData.GoVersion),
		tag.NewStringTag("server-version", headers.ServerVersion),
	)
	// Two authorizers would be one too many: the config's is the upstream JWT one.
	if a := cfg.Global.Authorization; a.Authorizer != "" || a.ClaimMapper != "" {
		return cli.Exit("global.authorization.authorizer/claimMapper are set, but this build uses its own (docs/production-engine.md)", 1)
	}
	authCfg, err := hostauth.ConfigFromEnv(os.Getenv)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if len(authCfg.HostTokenKey) == 0 {
		logger.Warn("GPU_FLEET_HOST_TOKEN_KEY is not set: every host token will be refused")
	}

	var dynamicConfigClient dynamicconfig.Client
	if cfg.DynamicConfigClient != nil {
		dynamicConfigClient, err = dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh())
		if err != nil {
			return cli.Exit(fmt.Sprintf("Unable to create dynamic config client. Error: %v", err), 1)
		}
	} else {
		dynamicConfigClient = dynamicconfig.NewNoopClient()
	}

	authorizer := hostauth.NewAuthorizer(authCfg, logger)
	claimMapper := hostauth.NewClaimMapper(authCfg, nil)
	watchRevocations(claimMapper.Revoked(), logger)
	s, err := temporal.NewServerFx(topLevelModule(authorizer.StreamGuard(claimMapper)),
		temporal.ForServices(c.StringSlice("service")),
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dynamicConfigClient),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(authorizer),
		// Caps each host's concurrent polls and heartbeat size; seals the task tokens handed to hosts,
		// which the authorizer then requires of their answers.
		temporal.WithChainedFrontendGrpcInterceptors(authorizer.LimitHosts, authorizer.Seal),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
	)
	if err != nil {
		return cli.Exit(fmt.Sprintf("Unable to create server. Error: %v.", err), 1)
	}
	if err := s.Start(); err != nil {
		return cli.Exit(fmt.Sprintf("Unable to start server. Error: %v", err), 1)
	}
	return cli.Exit("All services are stopped.", 0)
}

// watchRevocations loads the denylist of retired rentals now and rereads it every hostauth.ReloadEvery.
func watchRevocations(r *hostauth.Revoked, logger log.Logger) {
	if r == nil {
		logger.Warn("GPU_FLEET_REVOKED_HOSTS_FILE is not set: a retired rental's token works until it expires")
		return
	}
	load := func() {
		if changed, err := r.Reload(); err != nil {
			logger.Error("gpu-fleet revoked hosts file unreadable, keeping the list loaded before", tag.Error(err))
		} else if changed {
			logger.Info("gpu-fleet revoked hosts loaded", tag.NewInt("labels", r.Len()))
		}
	}
	load()
	go func() {
		for range time.Tick(hostauth.ReloadEvery) {
			load()
		}
	}()
}

func validateDynamicConfig(c *cli.Context) error {
	total := 0
	for _, fileName := range c.Args().Slice() {
		contents, err := os.ReadFile(fileName)
		if err != nil {
			return err
		}
		result := dynamicconfig.ValidateFile(contents)
		total += len(result.Errors)
		fmt.Println(fileName)
		t := template.Must(template.New("").Parse(
			"{{range .Errors}}  error: {{.}}\n{{end}}{{range .Warnings}}  warning: {{.}}\n{{end}}",
		))
		_ = t.Execute(os.Stdout, result)
	}
	if total > 0 {
		return fmt.Errorf("%d total errors", total)
	}
	return nil
}
