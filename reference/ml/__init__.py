"""calc::ml:: — hyperparameters, the Tier A expansion into flows, Tier B kernels, the model
descriptor, ml_predict and `.mnm` files. spec/ml-exact.md is the contract for every number."""
