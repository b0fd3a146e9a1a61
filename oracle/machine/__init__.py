"""The program model, the machine state, operand reading, acceptance forms."""
