// tsc does not copy declaration files; dist/index.d.ts imports ./schema.js,
// so the generated schema ships beside it.
import { copyFileSync } from "node:fs";

copyFileSync(new URL("../src/schema.d.ts", import.meta.url), new URL("../dist/schema.d.ts", import.meta.url));
