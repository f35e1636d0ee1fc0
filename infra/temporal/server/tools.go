//go:build tools

// Keeps the schema tool's main package in this module's graph so go.sum covers it.
package tools

import (
	_ "go.temporal.io/server/cmd/tools/sql"
)
