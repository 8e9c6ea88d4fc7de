"""Public path of the notebook widgets: `kvlab.widgets.RunBuilder` (they live in kvlab.lab)."""
from .lab.display import ProgressWidget, attach_progress, in_kernel  # noqa: F401
from .lab.widgets import RunBuilder  # noqa: F401
