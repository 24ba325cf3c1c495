"""The wider theory (the book's part "The wider theory"): multi-modal contrastive learning as an
asymmetric matrix factorisation, and alternating gradient descent on the factorisation."""
