/**
 * What the "Torch Doctor" status item shows for a backend state and the interpreter's health:
 * text, accessible label, tooltip (Markdown), colour and click command. Pure logic, unit-tested;
 * statusBar.ts draws it.
 *
 * The backend's states are starting / ready / restarting / error / stopped. A ready backend on an
 * interpreter without torch is shown as `warning` (yellow, `$(warning)`), and a click on it opens
 * "Torch Doctor: Select Interpreter" instead of the log: the one-click fix.
 */
import type { HealthSummary } from './interpreterHealth';

export type BackendState = 'starting' | 'ready' | 'restarting' | 'error' | 'stopped';
export type ShownState = BackendState | 'warning';

export const SHOW_LOG_COMMAND = 'torchDoctor.showLog';
export const SELECT_INTERPRETER_COMMAND = 'torchDoctor.selectInterpreter';

const ICONS: Record<ShownState, string> = {
  starting: '$(loading~spin)',
  ready: '$(pulse)',
  restarting: '$(loading~spin)',
  error: '$(error)',
  stopped: '$(circle-slash)',
  warning: '$(warning)',
};

export interface StatusView {
  state: ShownState;
  text: string;
  /** The accessible label carries the state in words: screen readers and the E2E tests read it. */
  label: string;
  /** Markdown, with theme icons and links to the two commands below (and nothing else). */
  tooltip: string;
  background?: 'error' | 'warning';
  command: string;
}

/**
 * @param detail the backend's sentence (what is happening, or what is wrong)
 * @param health the interpreter check's summary; undefined while it runs
 */
export function statusView(state: BackendState, detail: string, health?: HealthSummary): StatusView {
  const shown: ShownState = state === 'ready' && health?.warning ? 'warning' : state;
  const parts = [`**Torch Doctor: ${shown}**`, detail];
  if (health?.warning) {
    parts.push(`$(warning) ${health.warning}`);
  }
  parts.push(health ? health.lines.map((l) => `- ${l}`).join('\n') : '_Checking the interpreter…_');
  parts.push(
    `[$(gear) Select Interpreter](command:${SELECT_INTERPRETER_COMMAND}) · [$(output) Show Log](command:${SHOW_LOG_COMMAND})`,
  );
  return {
    state: shown,
    text: `${ICONS[shown]} Torch Doctor`,
    label: `Torch Doctor: ${shown}`,
    tooltip: parts.join('\n\n'),
    background: shown === 'error' ? 'error' : shown === 'warning' ? 'warning' : undefined,
    command: shown === 'warning' ? SELECT_INTERPRETER_COMMAND : SHOW_LOG_COMMAND,
  };
}
