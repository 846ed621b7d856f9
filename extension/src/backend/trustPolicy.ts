/**
 * Workspace Trust (Restricted Mode), the part without `vscode`: what is restricted and the words.
 *
 * In an untrusted workspace Torch Doctor keeps what only reads code (lint squiggles, hovers, quick
 * fixes, CodeLenses) and refuses what runs it: the model checks import the workspace's files in a
 * worker. `torchDoctor.python` is a restricted setting (package.json's
 * `capabilities.untrustedWorkspaces.restrictedConfigurations`): VS Code ignores the workspace's
 * value of it until the workspace is trusted, so a cloned repository cannot choose the interpreter
 * the backend runs. The backend is told too (`UNTRUSTED_ENV`) and refuses checks on its own.
 */

/** Set to "1" in the backend's environment while the workspace is not trusted. */
export const UNTRUSTED_ENV = 'TORCHDOCTOR_UNTRUSTED_WORKSPACE';

/** Settings whose workspace values VS Code ignores in Restricted Mode (mirrors package.json). */
export const RESTRICTED_SETTINGS = ['torchDoctor.python'];

/** The command that opens VS Code's workspace trust editor. */
export const MANAGE_TRUST_COMMAND = 'workbench.trust.manage';

export function untrustedMessage(what: string): string {
  return (
    `Torch Doctor: the ${what} runs this workspace's code, and the workspace is in Restricted Mode. ` +
    'Trust the workspace to run it; lint squiggles and hovers work without trust.'
  );
}

/** The backend's environment entries for the current trust state. */
export function trustEnv(isTrusted: boolean): Record<string, string> {
  return isTrusted ? {} : { [UNTRUSTED_ENV]: '1' };
}
