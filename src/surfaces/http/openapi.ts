/**
 * The OpenAPI 3.1 document, generated from the operations registry and their zod schemas. Each
 * schema is converted on its own (zod 4 `toJSONSchema`, draft 2020-12, which OpenAPI 3.1 uses);
 * named schemas (`.meta({ id })`) are moved into `components.schemas` and their refs rewritten.
 * The committed `openapi/openapi.json` must equal this output (a test checks it).
 */
import {
  OpenApiBuilder,
  type OperationObject,
  type ParameterObject,
  type SchemaObject,
} from 'openapi3-ts/oas31';
import { z } from 'zod';
import { errorCodes, Problem } from '../../domain/errors.ts';
import type { Operation } from '../../operations/define.ts';
import { operations } from '../../operations/index.ts';
import { version } from '../../version.ts';

type Json = Record<string, unknown>;

const pathParams = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

const errorStatuses = (op: Operation): number[] => {
  const statuses = new Set<number>([400, 401, 403, 500]);
  if (!op.annotations.readOnly || pathParams(op.http.path).length) statuses.add(404);
  if (!op.annotations.readOnly) {
    statuses.add(409);
    statuses.add(422);
    statuses.add(502);
    statuses.add(504);
  }
  if (op.http.method === 'POST' || op.http.method === 'PUT') {
    statuses.add(413);
    // A body must be sent as Content-Type: application/json (the front-door guard).
    statuses.add(415);
  }
  return [...statuses].sort();
};

const titleOf = (status: number): string =>
  Object.values(errorCodes).find((e) => e.status === status)?.title ?? 'Error';

export const buildOpenApiDocument = (ops: readonly Operation[] = operations): Json => {
  const components: Record<string, SchemaObject> = {};

  /** Converts one schema; hoists its named sub-schemas into components. */
  const convert = (schema: z.ZodType, io: 'input' | 'output'): SchemaObject => {
    const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Json;
    const text = JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/');
    const {
      $defs,
      $schema: _ignored,
      ...root
    } = JSON.parse(text) as Json & { $defs?: Record<string, SchemaObject> };
    for (const [name, def] of Object.entries($defs ?? {})) components[name] = def;
    return root as SchemaObject;
  };

  const builder = OpenApiBuilder.create()
    .addOpenApiVersion('3.1.0')
    .addTitle('powerplan')
    .addVersion(version)
    .addDescription(
      'Reads, measures and sets the operating system power plan (Windows power schemes, Linux tuned / ' +
        'power-profiles-daemon / cpufreq) and recommends one, with the benchmark evidence.',
    )
    .addLicense({ name: 'MIT', identifier: 'MIT' })
    .addServer({
      // Relative: a client resolves it against the address it fetched this document from, so "Try it
      // out" in /docs and generated clients call the service that served it, on whatever host and port.
      url: '/',
      description: 'The service that serves this document',
    });

  builder.addSecurityScheme('bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'A token created with `powerplan token create`; required when the service has a token file.',
  });
  convert(Problem, 'output');

  for (const op of ops) {
    const inputSchema = convert(op.input, 'input') as Json & {
      properties?: Record<string, Json>;
      required?: string[];
    };
    const inPath = pathParams(op.http.path);
    const parameters: ParameterObject[] = inPath.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: (inputSchema.properties?.[name] ?? { type: 'string' }) as SchemaObject,
    }));
    const bodyProps = Object.fromEntries(
      Object.entries(inputSchema.properties ?? {}).filter(([k]) => !inPath.includes(k)),
    );
    const bodyRequired = (inputSchema.required ?? []).filter((k) => !inPath.includes(k));
    const hasBody = op.http.method === 'POST' || op.http.method === 'PUT';
    if (!hasBody) {
      for (const [name, schema] of Object.entries(bodyProps)) {
        const { description, ...rest } = schema as Json & { description?: string };
        parameters.push({
          name,
          in: 'query',
          required: bodyRequired.includes(name),
          schema: rest as SchemaObject,
          ...(description ? { description } : {}),
        });
      }
    }
    const operation: OperationObject = {
      operationId: op.name,
      summary: op.title,
      description: op.description,
      tags: [op.http.path.split('/')[2] ?? 'service'],
      'x-required-scope': op.scope,
      security: [{}, { bearer: [op.scope] }],
      ...(parameters.length ? { parameters } : {}),
      ...(hasBody
        ? {
            requestBody: {
              required: bodyRequired.length > 0,
              content: {
                'application/json': {
                  schema: { ...inputSchema, properties: bodyProps, required: bodyRequired } as SchemaObject,
                },
              },
            },
          }
        : {}),
      responses: {
        [String(op.http.status ?? 200)]: {
          description: op.title,
          content: { 'application/json': { schema: convert(op.output, 'output') } },
        },
        ...Object.fromEntries(
          errorStatuses(op).map((s) => [
            String(s),
            {
              description: titleOf(s),
              content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
            },
          ]),
        ),
      },
    };
    builder.addPath(op.http.path, { [op.http.method.toLowerCase()]: operation });
  }

  builder.addPath('/healthz', {
    get: {
      operationId: 'healthz',
      summary: 'Liveness check',
      tags: ['service'],
      security: [{}],
      responses: {
        '200': {
          description:
            'The service is up. `degraded` when damaged state files were kept aside (`<name>.corrupt-<time>`); ' +
            'they are named in `damaged` and stay until an operator removes them.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  status: { enum: ['ok', 'degraded'] },
                  damaged: {
                    type: 'array',
                    items: {
                      type: 'object',
                      properties: {
                        file: { type: 'string' },
                        keptAs: { type: 'string' },
                        journal: { type: 'boolean' },
                      },
                      required: ['file', 'keptAs', 'journal'],
                    },
                  },
                },
                required: ['status', 'damaged'],
              },
            },
          },
        },
      },
    },
  });

  const doc = builder.getSpec() as unknown as Json & { components: Json };
  const sorted = Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b)));
  doc.components = { ...doc.components, schemas: sorted };
  return doc;
};
