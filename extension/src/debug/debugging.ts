/** Registers the `torchdoctor` debug type and the runtime injection into `debugpy` sessions. */
import * as path from 'path';
import * as vscode from 'vscode';
import { registerAllRanks } from './allRanks';
import { AnomalyTrackerFactory } from './anomalyTracker';
import { TorchDoctorAdapterFactory } from './debugAdapter';
import { DEBUG_TYPE, MS_PYTHON_DEBUG_TYPE, TorchDoctorConfigurationProvider } from './debugConfiguration';

export function registerDebugging(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const runtimeDir = context.asAbsolutePath('pybackend');
  const bundledLibs = context.asAbsolutePath(path.join('extension', 'bundled', 'libs'));
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new TorchDoctorAdapterFactory(bundledLibs, log)),
    vscode.debug.registerDebugConfigurationProvider(
      DEBUG_TYPE,
      new TorchDoctorConfigurationProvider(runtimeDir, log, true),
    ),
    // Harmless without ms-python.debugpy: VS Code never asks a provider for an unknown type.
    vscode.debug.registerDebugConfigurationProvider(
      MS_PYTHON_DEBUG_TYPE,
      new TorchDoctorConfigurationProvider(runtimeDir, log, false),
    ),
    vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, new AnomalyTrackerFactory(log)),
    vscode.debug.registerDebugAdapterTrackerFactory(MS_PYTHON_DEBUG_TYPE, new AnomalyTrackerFactory(log)),
  );
  registerAllRanks(context, log);
}
