// Loaded with `node --require` before The Lounge starts. The Lounge asks GitHub for a newer release
// at every start and has no setting to turn that off; the corpus's apps send nothing past loopback,
// so the check is replaced by one that does nothing. Everything else of the app runs as shipped.
"use strict";
const changelog = require(require.resolve("thelounge/dist/server/plugins/changelog.js", { paths: [process.cwd()] }));
changelog.default.checkForUpdates = () => {};
