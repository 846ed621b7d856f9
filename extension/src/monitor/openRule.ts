/**
 * When the "Torch Doctor: Training" view opens by itself (torchDoctor.monitor.openOnFirstStep):
 * once a run has a curve to draw, not at its first step. An optimizer's series (`opt0`, `opt1`...)
 * is training from its first step on. A script without an optimizer gets one `backward` step per
 * `backward()`: one of them is someone inspecting gradients (sample_workspace/inspect_tensors.py),
 * a one-point chart that would pop up beside the editor with nothing to show; a second one starts
 * a curve (a hand-written update loop, an autograd check run twice). The command "Torch Doctor:
 * Show Training Monitor" opens the view at any time, whatever this says. Pure logic, no `vscode`.
 */

/** The series of a script without an optimizer (the recorder's name for it). */
export const BACKWARD_SERIES = 'backward';
/** Steps a `backward` series needs before it is a curve. */
export const BACKWARD_STEPS_FOR_A_CURVE = 2;

/** What the rule reads of a rank's RunStore: its step series and the steps each has seen. */
export interface SeriesSteps {
  readonly tracks: ReadonlyMap<string, { readonly steps: number }>;
}

/** True when one rank's series hold a curve: an optimizer that stepped, or two backward steps. */
export function hasCurve(store: SeriesSteps): boolean {
  for (const [series, track] of store.tracks) {
    const needed = series === BACKWARD_SERIES ? BACKWARD_STEPS_FOR_A_CURVE : 1;
    if (track.steps >= needed) {
      return true;
    }
  }
  return false;
}

/** True when any rank of a job holds a curve (a torchrun job opens the view like one process). */
export function jobHasCurve(stores: Iterable<SeriesSteps | undefined>): boolean {
  for (const store of stores) {
    if (store && hasCurve(store)) {
      return true;
    }
  }
  return false;
}
