// Container healthcheck (deploy/Dockerfile HEALTHCHECK): exit 0 when the
// service answers GET /ready with 200 (database reachable, migrations known
// and applied), 1 otherwise. Plain Node, no dependencies.
const port = process.env.PORT || '3000';
const url = `http://127.0.0.1:${port}/ready`;
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(4000) });
  if (response.ok) process.exit(0);
  process.stderr.write(`not ready: ${response.status} ${await response.text()}\n`);
} catch (error) {
  process.stderr.write(`not ready: ${error.message}\n`);
}
process.exit(1);
