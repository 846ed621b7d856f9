/**
 * "Torch Doctor: Add Anomaly Breakpoint": an ordinary VS Code conditional breakpoint whose
 * condition calls a runtime helper, so it shows and edits in the Breakpoints view like any other.
 */
import * as vscode from 'vscode';
import { anomalyCondition, AnomalyConditionKind } from './anomalyConditions';

interface KindPick extends vscode.QuickPickItem {
  condition: AnomalyConditionKind;
}

const KINDS: KindPick[] = [
  { condition: 'nonfinite', label: 'Any tensor in scope has NaN or Inf', description: 'checks every tensor among the local variables' },
  { condition: 'exceeds', label: 'An expression exceeds a threshold', description: 'e.g. loss > 100 (seed 000), or a tensor whose |max| does' },
  { condition: 'lossSpike', label: 'The loss spiked', description: 'the last loss passed k × the running median of the losses' },
  { condition: 'gradNorm', label: "A model's gradient norm exceeds a value", description: 'total L2 norm of the parameter gradients' },
];

export function registerAnomalyBreakpoints(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('torchDoctor.addAnomalyBreakpoint', addAnomalyBreakpoint),
  );
}

async function addAnomalyBreakpoint(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showWarningMessage('Torch Doctor: put the cursor on a line of a Python file to add an anomaly breakpoint there.');
    return;
  }
  const pick = await vscode.window.showQuickPick(KINDS, { title: 'Torch Doctor: pause on this line when…' });
  if (!pick) {
    return;
  }
  const args = await askArguments(pick.condition);
  if (!args) {
    return;
  }
  const condition = anomalyCondition(pick.condition, args);
  const line = editor.selection.active.line;
  const location = new vscode.Location(editor.document.uri, new vscode.Position(line, 0));
  vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(location, true, condition)]);
  void vscode.window.showInformationMessage(`Torch Doctor: anomaly breakpoint on line ${line + 1}: ${pick.label.toLowerCase()}.`);
}

async function askArguments(kind: AnomalyConditionKind): Promise<Record<string, string> | undefined> {
  switch (kind) {
    case 'nonfinite':
      return {};
    case 'exceeds': {
      const expression = await ask('Expression to watch', 'loss', 'a Python expression valid on this line, e.g. loss or logits');
      const threshold = expression && (await askNumber('Pause when it exceeds', '100'));
      return expression && threshold ? { expression, threshold } : undefined;
    }
    case 'lossSpike': {
      const loss = await ask('Loss variable', 'loss', 'the loss on this line; each evaluation records it');
      const factor = loss && (await askNumber('Pause when the loss exceeds this many times its running median', '10'));
      return loss && factor ? { loss, factor } : undefined;
    }
    case 'gradNorm': {
      const model = await ask('Model variable', 'model', 'the nn.Module whose gradients to measure');
      const maxNorm = model && (await askNumber('Pause when the total gradient norm exceeds', '1000'));
      return model && maxNorm ? { model, maxNorm } : undefined;
    }
  }
}

function ask(title: string, value: string, prompt: string): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title,
    value,
    prompt,
    validateInput: (v) => (v.trim() ? undefined : 'Required'),
  });
}

function askNumber(title: string, value: string): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title,
    value,
    validateInput: (v) => (Number.isFinite(Number(v)) && Number(v) > 0 ? undefined : 'A positive number, e.g. 100 or 1e4'),
  });
}
