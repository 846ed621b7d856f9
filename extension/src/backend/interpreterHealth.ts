/**
 * What the chosen interpreter can do, asked once per backend start: its Python version, and
 * whether it has torch (with CUDA), numpy and debugpy. The backend itself never imports torch,
 * so without this check a torch-less interpreter looks "ready" until the first model check fails.
 *
 * The probe runs the interpreter with a short `-c` script (HEALTH_SCRIPT) and a time limit; it
 * never blocks activation. Parsing and the sentences are pure logic, unit-tested.
 */
import { execFile } from 'child_process';

/** Enough for `import torch` on a cold disk; a slower interpreter is reported, not waited for. */
export const HEALTH_TIMEOUT_MS = 10_000;

/**
 * Runs under the candidate interpreter; written to parse on Python 2.7 too (so an old
 * interpreter gets a sentence, not a syntax error). It prints two JSON lines: first the
 * versions from the packages' metadata (fast: nothing imported), then, after `import torch`,
 * the full report with CUDA. A slow `import torch` (a cold disk, a busy machine) still leaves
 * the first line. `torch.cuda.is_available()` and `device_count()` create no CUDA context.
 */
export const HEALTH_SCRIPT = [
  'import sys, json',
  'r = {"version": list(sys.version_info[:3]), "executable": sys.executable}',
  'def emit(stage):',
  '    r["stage"] = stage',
  '    sys.stdout.write("\\n" + json.dumps(r) + "\\n")',
  '    sys.stdout.flush()',
  'try:',
  '    from importlib import metadata',
  '    for name in ("torch", "numpy", "debugpy"):',
  '        try:',
  '            r[name] = {"version": metadata.version(name)}',
  '        except metadata.PackageNotFoundError:',
  '            r[name] = {"error": "No module named %r" % name}',
  '    emit("metadata")',
  'except Exception:',
  '    pass',
  'def mod(name):',
  '    try:',
  '        m = __import__(name)',
  '        return m, {"version": str(getattr(m, "__version__", "unknown"))}',
  '    except Exception as e:',
  '        return None, {"error": "%s: %s" % (type(e).__name__, e)}',
  't, r["torch"] = mod("torch")',
  'if t is not None:',
  '    try:',
  '        ok = bool(t.cuda.is_available())',
  '        r["torch"]["cuda"] = {"available": ok, "version": getattr(t.version, "cuda", None),',
  '                              "devices": t.cuda.device_count() if ok else 0}',
  '    except Exception as e:',
  '        r["torch"]["cuda"] = {"available": False, "error": "%s: %s" % (type(e).__name__, e)}',
  'r["numpy"] = mod("numpy")[1]',
  'r["debugpy"] = mod("debugpy")[1]',
  'emit("imported")',
].join('\n');

export interface ModuleReport {
  version?: string;
  error?: string;
}

export interface CudaReport {
  available: boolean;
  version?: string | null;
  devices?: number;
  error?: string;
}

export interface HealthReport {
  /** "metadata": versions from the package metadata only (the import did not finish in time). */
  stage?: 'metadata' | 'imported';
  version: number[];
  executable: string;
  torch: ModuleReport & { cuda?: CudaReport };
  numpy: ModuleReport;
  debugpy: ModuleReport;
}

/** The probe's answer: a report, or why there is none (could not start, timed out, garbage). */
export type InterpreterHealth =
  | { kind: 'report'; python: string; report: HealthReport }
  | { kind: 'unavailable'; python: string; reason: string };

/** What happened when a script ran (shared by the health probe and the picker's quick probe). */
export interface ProbeOutcome {
  /** Node's error code when the process could not start (e.g. ENOENT). */
  spawnError?: string;
  timedOut?: boolean;
  exitCode?: number | null;
  stdout: string;
  stderr: string;
}

/** Run `python -c script` with a time limit; never rejects. */
export function runScript(
  python: string,
  script: string,
  timeoutMs: number,
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    execFile(
      python,
      ['-c', script],
      { env: options.env, cwd: options.cwd, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { killed?: boolean; signal?: string }) | null;
        const code = e?.code;
        resolve({
          spawnError: typeof code === 'string' && code !== 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' ? code : undefined,
          timedOut: Boolean(e?.killed && e.signal === 'SIGKILL'),
          exitCode: typeof code === 'number' ? code : err ? null : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        });
      },
    );
  });
}

/** Ask `python` the health questions (HEALTH_SCRIPT) within HEALTH_TIMEOUT_MS. */
export async function probeHealth(
  python: string,
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<InterpreterHealth> {
  const timeoutMs = options.timeoutMs ?? HEALTH_TIMEOUT_MS;
  return parseHealth(python, await runScript(python, HEALTH_SCRIPT, timeoutMs, options), timeoutMs);
}

export function parseHealth(python: string, outcome: ProbeOutcome, timeoutMs = HEALTH_TIMEOUT_MS): InterpreterHealth {
  if (outcome.spawnError) {
    return { kind: 'unavailable', python, reason: `it could not be started (${outcome.spawnError})` };
  }
  const report = lastJson(outcome.stdout);
  if (outcome.timedOut && !isHealthReport(report)) {
    return { kind: 'unavailable', python, reason: `it did not answer within ${Math.round(timeoutMs / 1000)} s` };
  }
  if (!isHealthReport(report)) {
    const why = lastLine(outcome.stderr) || `exit code ${outcome.exitCode}`;
    return { kind: 'unavailable', python, reason: `it did not answer as a Python interpreter (${why})` };
  }
  return { kind: 'report', python, report };
}

/** What the status item shows: a warning sentence when something the features need is missing. */
export interface HealthSummary {
  /** One sentence, present only when the user should act (torch missing). */
  warning?: string;
  /** Markdown bullet lines for the tooltip, one per fact. */
  lines: string[];
}

export function summarizeHealth(health: InterpreterHealth): HealthSummary {
  if (health.kind === 'unavailable') {
    return { lines: [`Interpreter check of ${code(health.python)}: ${health.reason}.`] };
  }
  const r = health.report;
  const version = r.version.slice(0, 3).join('.');
  const lines = [`Python ${version} at ${code(r.executable || health.python)}`];
  let warning: string | undefined;
  if (r.torch.version) {
    const cuda = r.stage === 'metadata' ? 'CUDA not checked (`import torch` did not finish)' : cudaText(r.torch.cuda);
    lines.push(`torch ${r.torch.version} · ${cuda}`);
  } else {
    lines.push(`torch: **not installed** (${r.torch.error ?? 'no module named torch'})`);
    warning =
      `torch is not installed in ${r.executable || health.python} (Python ${version}): ` +
      'the model checks, the anomaly watch and the tensor summaries need it.';
  }
  lines.push(r.numpy.version ? `numpy ${r.numpy.version}` : 'numpy: not installed');
  lines.push(
    r.debugpy.version
      ? `debugpy ${r.debugpy.version}`
      : "debugpy: not installed (debugging uses the extension's bundled copy)",
  );
  if (r.version[0] < 3 || (r.version[0] === 3 && r.version[1] < 10)) {
    lines.push('Debugging needs Python 3.10 or newer.');
  }
  return { warning, lines };
}

function cudaText(cuda: CudaReport | undefined): string {
  if (!cuda) {
    return 'CUDA: unknown';
  }
  if (cuda.error) {
    return `CUDA: error (${cuda.error})`;
  }
  if (!cuda.available) {
    return cuda.version ? `CUDA ${cuda.version} build, no GPU visible` : 'CPU build (no CUDA)';
  }
  const n = cuda.devices ?? 0;
  return `CUDA ${cuda.version ?? ''}: ${n} ${n === 1 ? 'GPU' : 'GPUs'}`.replace(' :', ':');
}

/** A path or command in inline code, so `_` and `*` in it are not read as Markdown. */
export function code(text: string): string {
  return '`' + text.replace(/`/g, "'") + '`';
}

function isHealthReport(r: unknown): r is HealthReport {
  const o = r as HealthReport | undefined;
  return (
    !!o &&
    Array.isArray(o.version) &&
    typeof o.executable === 'string' &&
    typeof o.torch === 'object' &&
    typeof o.numpy === 'object' &&
    typeof o.debugpy === 'object'
  );
}

/** The last stdout line that parses as JSON (a sitecustomize may print before our line). */
export function lastJson(stdout: string): unknown {
  const lines = stdout.trim().split(/\r?\n/).reverse();
  for (const line of lines) {
    try {
      return JSON.parse(line);
    } catch {
      // not ours; keep looking upwards
    }
  }
  return undefined;
}

function lastLine(text: string): string {
  const lines = text.trim().split(/\r?\n/);
  return lines[lines.length - 1] ?? '';
}
