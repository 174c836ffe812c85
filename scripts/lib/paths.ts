import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (the folder holding the workspaces' package.json). */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
