"""ColoredMNIST: the paper's real-data experiment (Table 1), reproduced with every choice visible."""
