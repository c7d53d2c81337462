/**
 * Runs one Lambda handler module in a process of its own, as the Lambda runtime would: imports it,
 * calls `handler` with the event given as JSON, and prints the answer (or the error's message) as
 * JSON. Usage: node invoke-handler.ts <module path> <event JSON>
 */
const [modulePath, eventJson] = process.argv.slice(2);
if (!modulePath || !eventJson) throw new Error("usage: invoke-handler.ts <module path> <event JSON>");
const { handler } = (await import(modulePath)) as { handler: (event: unknown) => Promise<unknown> };
try {
  process.stdout.write(JSON.stringify({ answer: await handler(JSON.parse(eventJson)) }));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
}
