/**
 * The `torchdoctor` debug adapter: `python -m debugpy.adapter` from the session's
 * interpreter, or from the debugpy bundled with the extension when that interpreter
 * has none. No ms-python extension needed.
 */
import { execFile } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';
import { resolveInterpreter } from '../backend/interpreter';
import { isSubprocessAttach } from './torchrunConfig';

export class TorchDoctorAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(
    private readonly bundledLibs: string,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
    const config = session.configuration;
    if (isSubprocessAttach(config)) {
      // A process the parent's debugpy followed (a torchrun rank, a spawned worker): its session
      // goes through the adapter that already runs the parent, which waits on this port.
      this.log.info(`Debug adapter: "${config.name}" attaches through the parent's adapter`);
      return new vscode.DebugAdapterServer(config.connect.port, config.connect.host);
    }
    const python: string = config.python || (await resolveInterpreter(session.workspaceFolder?.uri)).command;
    const own = await debugpyVersion(python);
    const env: { [key: string]: string } = {};
    if (own) {
      this.log.info(`Debug adapter: debugpy ${own} of ${python}`);
    } else {
      env.PYTHONPATH = [this.bundledLibs, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
      this.log.info(`Debug adapter: ${python} has no debugpy; using the bundled one from ${this.bundledLibs}`);
    }
    return new vscode.DebugAdapterExecutable(python, ['-m', 'debugpy.adapter'], { env });
  }
}

function debugpyVersion(python: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(python, ['-c', 'import debugpy; print(debugpy.__version__)'], { timeout: 15_000 }, (err, stdout) =>
      resolve(err ? undefined : String(stdout).trim() || undefined),
    );
  });
}
