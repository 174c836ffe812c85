// Command-line options of the benchmarks: `--name value` pairs and `--flag` switches.

export const args = process.argv.slice(2);

/** The value after `--name`, if given. */
export function argValue(name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}
