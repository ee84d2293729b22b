// The sender thread's entry (body-sender.ts starts it). A worker thread does not
// inherit the TypeScript loader its parent runs under (tsx for `npm run serve`,
// ts-jest in the tests), so it registers tsx itself and imports the loop.
const { tsImport } = await import('tsx/esm/api');
await tsImport('./sender-loop.ts', import.meta.url);
