/**
 * Every custom LSP method and payload shared with the backend.
 * The Python twin is `pybackend/torchdoctor/server/protocol.py`; keep them in step.
 * Nothing else in the extension spells a `torchDoctor/*` method name.
 */

/** Request: who the backend is (shown in the status bar tooltip). */
export const SERVER_INFO = 'torchDoctor/serverInfo';

export interface ServerInfo {
  version: string;
  pid: number;
  python: string;
  pythonVersion: string;
}
