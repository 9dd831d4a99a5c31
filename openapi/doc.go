// Package openapi derives the service's OpenAPI 3.0 document from the loaded
// model, validates POST /predict bodies against it with kin-openapi, and
// serves the document together with offline Swagger UI and ReDoc pages.
//
// The three parts share one source of truth, the document returned by Build:
//
//   - Build turns a core.ModelInfo into an *openapi3.T whose POST /predict
//     request schema has one property per model input (nested arrays as deep
//     as the input's rank, element types and bounds from the ONNX element
//     type, fixed dimensions as minItems/maxItems) and whose response schema
//     has one property per output.
//   - NewValidator derives a structural schema from that document (the JSON
//     kind of each input, the required inputs, no unknown inputs); a body is
//     scanned in place and a few-byte stand-in of its top level goes through
//     openapi3filter; the element data is left to the typed tensor decoder.
//     See README.md for why.
//   - NewDocs serves the document at /openapi.json and the Swagger UI and
//     ReDoc pages at /docs and /redoc from assets embedded in the binary.
package openapi
