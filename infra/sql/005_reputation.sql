-- Reputation that forgives and remembers (docs/operating.md, "Reputation"). A mark for a transient
-- cause expires (expires_at); NULL is a mark that stands until an operator lifts it. A machine whose
-- mark has expired is on probation until it passes a full benchmark, which clears the row.
ALTER TABLE bad_machines ADD COLUMN expires_at timestamptz;

-- The three verdicts, never merged (workflows/domain/policy/verdicts.ts): outcome says whether the instance
-- was kept or destroyed; verdict says why: promote, kill (the host is bad) or inconclusive (not its fault).
ALTER TABLE instances ADD COLUMN verdict text CHECK (verdict IN ('promote', 'kill', 'inconclusive'));
UPDATE instances SET verdict = CASE
  WHEN outcome = 'promoted' THEN 'promote'
  WHEN failure_type IN ('BenchmarkTimeout', 'BenchRateBelowMin', 'DaemonCrashed', 'DaemonOOM', 'ProofFailed',
                        'ProofDeadlineExceeded', 'RateDegraded') THEN 'kill'
  ELSE 'inconclusive' END
WHERE outcome IS NOT NULL;
