/**
 * The `"torchrun"` launch attribute and the debug sessions of its ranks. Pure logic, no
 * `vscode` import, unit-tested.
 *
 * - `torchrunLaunch`: `"program"` + `"torchrun": {"nproc_per_node": 2, ...}` becomes a launch
 *   of `python -m torch.distributed.run --nproc-per-node 2 --standalone program args` with
 *   subprocess debugging on: debugpy follows torchrun's worker processes, and each one asks the
 *   client (VS Code, by DAP's `startDebugging` reverse request) for a child session.
 * - `isSubprocessAttach`: such a child attaches through the adapter that already runs the
 *   parent (its `connect` is that adapter's client port), never through a new adapter.
 * - `rankName`: the child is named `rank K` from the `RANK` its process was started with.
 */

export interface LaunchLike {
  [key: string]: unknown;
  program?: string;
  args?: string[];
  torchrun?: unknown;
}

/** torchrun options that choose a rendezvous: with none, `--standalone` picks a free port. */
const RENDEZVOUS = ['standalone', 'rdzv_endpoint', 'rdzv-endpoint', 'master_addr', 'master-addr', 'nnodes'];

export class TorchrunConfigError extends Error {}

/** The launch configuration with `torchrun` turned into torch.distributed.run's arguments. */
export function torchrunLaunch(config: LaunchLike): LaunchLike {
  if (config.torchrun === undefined || config.torchrun === false) {
    return config;
  }
  const options = torchrunOptions(config.torchrun);
  if (!config.program) {
    throw new TorchrunConfigError('"torchrun" needs "program": the training script each rank runs');
  }
  const out: LaunchLike = { ...config };
  delete out.program;
  delete out.torchrun;
  out.module = 'torch.distributed.run';
  out.args = [...torchrunArgs(options), config.program, ...(config.args ?? [])];
  out.subProcess = true;
  return out;
}

function torchrunOptions(value: unknown): Record<string, unknown> {
  if (value === true) {
    return { nproc_per_node: 2 };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TorchrunConfigError('"torchrun" must be true or an object such as {"nproc_per_node": 2}');
  }
  return value as Record<string, unknown>;
}

/** `{"nproc_per_node": 2, "max_restarts": 0}` -> `--nproc-per-node 2 --max-restarts 0 --standalone`. */
export function torchrunArgs(options: Record<string, unknown>): string[] {
  const args: string[] = [];
  for (const [key, value] of Object.entries(options)) {
    if (value === false || value === null || value === undefined) {
      continue;
    }
    const flag = `--${key.replace(/_/g, '-')}`;
    if (value === true) {
      args.push(flag);
    } else if (typeof value === 'string' || typeof value === 'number') {
      args.push(flag, String(value));
    } else {
      throw new TorchrunConfigError(`"torchrun.${key}" must be a string, a number or true`);
    }
  }
  if (!Object.keys(options).some((k) => RENDEZVOUS.includes(k.replace(/-/g, '_')) || RENDEZVOUS.includes(k))) {
    args.push('--standalone');
  }
  return args;
}

/** A child session debugpy asked for: a subprocess attaching through the parent's adapter. */
export function isSubprocessAttach(config: { [key: string]: unknown }): boolean {
  const connect = config.connect as { port?: unknown } | undefined;
  return config.request === 'attach' && config.subProcessId !== undefined && typeof connect?.port === 'number';
}

/** `rank 1` from a process environment (`/proc/PID/environ`: NUL-separated), else undefined. */
export function rankName(environ: string | undefined): string | undefined {
  if (!environ) {
    return undefined;
  }
  const entries = environ.split('\0');
  const rank = entries.find((e) => e.startsWith('RANK='))?.slice('RANK='.length);
  return rank !== undefined && /^\d+$/.test(rank) ? `rank ${rank}` : undefined;
}
