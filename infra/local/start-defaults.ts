/**
 * What `npm start` (start.ts) uses when PORT, DEMO_PORT or DATA_DIR is unset. Apart from start.ts,
 * which starts the service as it loads, so that the README's test can read them.
 */
export const startDefaults = { port: 8080, demoPort: 8081, dataDir: ".data" } as const;
