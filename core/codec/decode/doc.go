// Package decode turns a model's output tensor into something a person
// reads: the top classes of a classifier, with their labels and scores
// (Classifier), the entities a token classifier finds in a text
// (Entities), or the text of a CTC recognizer such as PaddleOCR's (CTC). It is shared by the image and text features and by every protocol
// (the v1 JSON /predict, the Open Inference Protocol over REST and gRPC),
// so it knows no wire format beyond the small JSON and Triton helpers
// below, imports no protocol, and is pure Go: the ONNX Runtime binding and
// svc's configuration are not its business.
//
// # Classification
//
// Classifier.Decode reads a score tensor of shape [N, C] (one row of C
// class scores per item), [C] (one item) or [N, 1, C] (squeezed to
// [N, C]); any other rank or shape is an error that names the shape.
// Float32, Float64, Float16, BFloat16 and every integer type are read as
// float64. With Softmax set, each row goes through a numerically stable
// softmax first (the row's maximum is subtracted; NaN entries stay NaN and
// take no part; a row whose maximum is ±Inf shares the probability evenly
// among its entries equal to that maximum); with Sigmoid set, each score
// goes through the logistic function instead, on its own (a multi-label
// classifier's logits; setting both is an error). Each item gets its TopK classes
// (TopK ≤ 0 means 1; at most C), in the order: higher score first, NaN
// after every number, equal scores by lower index. A class without a label
// (Labels shorter than C) is labelled with its index in decimal. N = 0
// gives an empty, non-nil list.
//
// # Entities
//
// Entities groups the tokens of a text, each with its best class (a
// Classifier's top class of the token's scores) and its span in the text
// in characters (Unicode code points), into entities, by the simple
// aggregation of token classification: "B-X" starts an entity of X, "I-X"
// or a bare "X" continues the entity before it when that is of X, else
// starts one; entities of "O" are dropped; an entity spans its first
// piece's start to its last piece's end, carries that text, and scores the
// mean of its pieces' scores. AppendEntitiesJSON writes
// {"entity","start","end","text","score"} per entity, one array per text.
//
// # CTC text
//
// CTC.Decode reads [N, T, C] (or [T, C] for one item): T time steps of C
// class scores. Greedy decoding: the argmax of each step (ties to the lower
// index; a step whose scores are all NaN counts as a blank), then repeats
// collapsed, then blanks dropped, so "a a - b b" reads "ab" and "a - a"
// reads "aa". Class Blank (default 0; negative counts from the end, -1 is
// the last class) is the blank; the other classes map in order onto
// Labels, then, when Space is in effect, onto one last " " class. With
// Space nil, Space is in effect when C = len(Labels)+2 (PaddleOCR's blank,
// labels and space) and not when C = len(Labels)+1; any other C is an
// error. The score of a text is the mean, over the steps whose symbol was
// kept, of that step's maximum (PaddleOCR's convention), after a softmax of
// the step when CTC.Softmax is set (for models that output logits); an
// empty text scores 0.
//
// # Labels
//
// LoadLabels reads a label file: one label per line, UTF-8, a leading BOM
// and each line's trailing "\r" removed, the empty line after a final
// newline ignored. Every other line is a label, empty ones and ones with
// spaces included (a label's line number is its class index, and " " is a
// label in some OCR dictionaries). A file with no labels, or not UTF-8, is
// an error naming the path (and the line).
//
// LabelsFromMetadata finds labels in an ONNX model's metadata properties:
// "labels" first, then Ultralytics' "names". See its documentation for the
// accepted forms.
//
// # Encoding
//
// AppendClassesJSON and AppendTextsJSON write compact JSON:
// [{"label":"cat","index":3,"score":0.93}] per item and
// {"text":"abc","score":0.97} per item. Scores are written as the shortest
// decimal that reads back as the same float32 (models compute in float32 at
// best, so more digits would be noise), NaN and ±Inf as null; labels and
// texts are escaped as JSON requires (invalid UTF-8 becomes U+FFFD), not
// for HTML. Class and Text marshal the same way through encoding/json.
// TritonClasses writes the
// strings of the Open Inference Protocol's classification extension as
// Triton does.
package decode
