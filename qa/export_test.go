package qa

// The prompt's worked example, for the external tests that check a model
// echoing it is caught.
const (
	ExampleText    = exampleText
	ExampleChunkID = exampleChunkID
)
