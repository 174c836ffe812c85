// What localbase keeps beside a PGlite data folder, never inside it (`db reset` empties the folder): the storage
// bytes, the signing keys and the lock. One place for the names, for the server's defaults and for whoever removes a
// data folder for good (tests, benches).
import path from 'node:path';

export function besideDataFolder(dataDir: string): { storage: string; signingKeys: string; lock: string } {
  const dir = path.resolve(dataDir);
  return { storage: `${dir}.storage`, signingKeys: `${dir}.signing_keys.json`, lock: `${dir}.lock` };
}

/** The data folder and everything kept beside it: what to delete to remove it entirely. */
export function dataFolderEntries(dataDir: string): string[] {
  return [path.resolve(dataDir), ...Object.values(besideDataFolder(dataDir))];
}
