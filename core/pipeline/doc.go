// Package pipeline serves a model made of models: the page reader (OCR),
// PaddleOCR's text detector, its optional orientation classifier and its
// recogniser run one after the other on one picture, as PaddleOCR's
// Python pipeline (TextSystem) runs them.
//
// It sits above the codecs and below the protocols: it decodes the
// picture once (core/codec/image), reads the detector's map with
// core/codec/page, decodes the recogniser's output with core/codec/decode,
// and runs each stage's model through the core.Runner that serves that
// model alone (the scheduler's, with its batching and slots), so that
// there is no second scheduler. It never touches ONNX Runtime.
package pipeline
