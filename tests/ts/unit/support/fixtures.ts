// The stored answers the TS unit tests draw (tests/ts/unit/fixtures/): real `torchdoctor check
// --json` outputs and torchDoctor/diagnoseSnapshot answers, paths rewritten to /ws.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// Bundled tests run from out/tests/<folder>/; `make test-ts` runs them from the repository root.
const FIXTURES = [resolve(__dirname, '../../../tests/ts/unit/fixtures'), resolve('tests/ts/unit/fixtures')];

export function readFixture<T>(file: string): T {
  return JSON.parse(readFixtureText(file)) as T;
}

/** The 1-based line of diagnose_fixtures.py (the script the diagnose-*.json answers come from)
 * that first contains `text`: the locations in those answers point into it, and this keeps a
 * test true when the script is reformatted and the fixtures regenerated. */
export function generatorLine(text: string): number {
  const index = readFixtureText('diagnose_fixtures.py').split('\n').findIndex((line) => line.includes(text));
  if (index < 0) {
    throw new Error(`diagnose_fixtures.py has no line with ${JSON.stringify(text)}`);
  }
  return index + 1;
}

function readFixtureText(file: string): string {
  for (const dir of FIXTURES) {
    try {
      return readFileSync(join(dir, file), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw err;
      }
    }
  }
  throw new Error(`fixture ${file} not found`);
}
