//go:build tools

// Keeps the CLI's main package in this module's graph so go.sum covers it.
package tools

import _ "github.com/temporalio/cli/cmd/temporal"
