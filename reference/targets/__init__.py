"""Where a compiled flow runs (DESIGN §7): the local interpreter, a Bark VM child, a CDP
worker, all behind one interface (`target.py`)."""
