// The stored answers the TS unit tests draw (tests/ts/unit/fixtures/): real `torchdoctor check
// --json` outputs and torchDoctor/diagnoseSnapshot answers, paths rewritten to /ws.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// Bundled tests run from out/tests/<folder>/; `make test-ts` runs them from the repository root.
const FIXTURES = [resolve(__dirname, '../../../tests/ts/unit/fixtures'), resolve('tests/ts/unit/fixtures')];

export function readFixture<T>(file: string): T {
  for (const dir of FIXTURES) {
    try {
      return JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw err;
      }
    }
  }
  throw new Error(`fixture ${file} not found`);
}
