"""Optimizers and learning-rate schedules, with PyTorch's names, defaults and state_dict layout."""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .radam import RAdam
from .rprop import Rprop
from . import swa_utils
from .adafactor import Adafactor
from .muon import Muon
from .stateless import swap_in_optimizer_params_and_state

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "lr_scheduler",
           "NAdam", "RAdam", "Adamax", "ASGD", "Rprop", "LBFGS"]
__all__ += ["Adafactor", "Muon", "swa_utils", "swap_in_optimizer_params_and_state"]
