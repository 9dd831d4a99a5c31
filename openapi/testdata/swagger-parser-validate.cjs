// Validates OpenAPI documents with @apidevtools/swagger-parser, independently
// of kin-openapi. Called by the openapi package's tests.
//
// Usage: node swagger-parser-validate.cjs TOOLS_DIR FILE...
// Prints a JSON array with one {file, ok, error} entry per file.
"use strict";
const path = require("path");

const toolsDir = path.resolve(process.argv[2]);
const SwaggerParser = require(path.join(toolsDir, "node_modules", "@apidevtools", "swagger-parser"));

(async () => {
  const results = [];
  for (const file of process.argv.slice(3)) {
    try {
      await SwaggerParser.validate(file);
      results.push({ file, ok: true });
    } catch (err) {
      results.push({ file, ok: false, error: String((err && err.message) || err) });
    }
  }
  process.stdout.write(JSON.stringify(results));
})().catch((err) => {
  console.error(err);
  process.exit(2);
});
