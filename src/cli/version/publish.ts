import fs from 'node:fs';
import path from 'node:path';
import { publishVersion } from '../../commands/publish-version';
import { createJsonSchemaService } from '../../engine/json-schemas';
import { Sandbox } from '../../sandbox/sandbox';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findCircuit, findUser, restVersion } from '../present';
import { CliError } from '../output';

export interface VersionPublishOptions {
  username: string;
  circuit: string;
  file: string;
  primary?: boolean;
}

/** Reads and parses the definition file before touching the database. */
export function readDefinition(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(file), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new CliError(`cannot read definition file ${file}: ${reason}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`definition file ${file} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Publishes the next version of the user's circuit; invalid definitions fail with the reason. */
export async function versionPublish(io: CliIo, options: VersionPublishOptions) {
  const definition = readDefinition(options.file);
  return withDatabase(io, async ({ sequelize }) => {
    const publisher = await findUser(options.username);
    const circuit = await findCircuit(publisher, options.circuit);
    const schemas = createJsonSchemaService();
    const sandbox = new Sandbox();
    try {
      const version = await publishVersion(
        { sequelize, schemas, sandbox },
        publisher,
        circuit,
        definition,
        options.primary ?? false,
      );
      await circuit.reload();
      return restVersion(version, circuit.primary_version_uid ?? null);
    } finally {
      await Promise.all([schemas.close(), sandbox.close()]);
    }
  });
}
