"""zero.save(model) of a whole module: pickled as PyTorch does, refused by default (weights_only=True),
loaded with weights_only=False or with the classes allowlisted (safe_globals / add_safe_globals)."""
import io
import os
import pickle

import numpy as np
import pytest

import zero
from zero import nn
from zero.serialization import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

torch = pytest.importorskip("torch")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.head = nn.Linear(4, 4, bias=False)
        self.register_buffer("scale", zero.tensor([2.0]))
        self.note = {"epochs": 3, "dtype": zero.float64, "device": zero.device("cpu")}

    def forward(self, x):
        return self.head(self.fc(x).relu()) * self.scale


class TiedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Linear(2, 2)
        self.b.weight = self.a.weight


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)


class Hostile:
    def __reduce__(self):
        return os.system, ("touch HACKED",)


NET_CLASSES = [Net, nn.Linear]


def saved(obj):
    buffer = io.BytesIO()
    zero.save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_a_whole_module_is_refused_by_default_like_pytorch():
    for weights_only in ({}, {"weights_only": True}, {"weights_only": None}):
        with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed.*Unsupported global: GLOBAL "
                                                         r"test_serialization_modules\.Net.*weights_only=False"):
            zero.load(saved(Net()), **weights_only)
    theirs = io.BytesIO()
    torch.save(TorchNet(), theirs)
    theirs.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*Unsupported global: GLOBAL "
                                                     r"test_serialization_modules\.TorchNet"):
        torch.load(theirs)


def test_a_whole_module_loads_with_weights_only_false():
    net = Net()
    loaded = zero.load(saved(net), weights_only=False)
    assert type(loaded) is Net and loaded.note == net.note and repr(loaded) == repr(net)
    assert loaded.state_dict().keys() == net.state_dict().keys()
    for key, value in net.state_dict().items():
        np.testing.assert_array_equal(loaded.state_dict()[key].numpy(), value.numpy())
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in loaded.parameters())
    assert not loaded.scale.requires_grad
    x = zero.randn(2, 3)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), net(x).detach().numpy())
    loaded(x).sum().backward()
    assert loaded.fc.weight.grad is not None


def test_tied_weights_stay_tied_and_modules_inside_structures():
    loaded = zero.load(saved({"model": TiedNet(), "epoch": 7, "w": zero.ones(2)}), weights_only=False)
    assert loaded["epoch"] == 7 and loaded["w"].tolist() == [1.0, 1.0]
    assert loaded["model"].a.weight is loaded["model"].b.weight
    with pytest.raises(pickle.UnpicklingError, match="TiedNet"):
        zero.load(saved({"model": TiedNet(), "epoch": 7}))


def test_safe_globals_allow_named_classes_under_weights_only():
    buffer = saved(Net())
    with safe_globals(NET_CLASSES):
        assert type(zero.load(buffer)) is Net
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Net"):
        zero.load(buffer)  # the block is over
    buffer.seek(0)
    with safe_globals([Net]), pytest.raises(pickle.UnpicklingError, match=r"GLOBAL zero\.nn\.[a-z]+\.Linear"):
        zero.load(buffer)  # every class must be allowed, as in PyTorch
    buffer.seek(0)
    try:
        add_safe_globals(NET_CLASSES)
        assert set(get_safe_globals()) >= set(NET_CLASSES)
        assert type(zero.load(buffer, weights_only=True)) is Net
    finally:
        clear_safe_globals()
    assert get_safe_globals() == []
    assert zero.serialization.safe_globals is safe_globals  # reachable as torch.serialization is
    assert {"safe_globals", "add_safe_globals", "get_safe_globals", "clear_safe_globals"} <= set(
        dir(torch.serialization))


def test_a_hostile_pickle_runs_nothing_under_weights_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    buffer = saved({"x": Hostile()})
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL (posix|os|nt)\.system"):
        zero.load(buffer)
    assert not (tmp_path / "HACKED").exists()
    with safe_globals([Net]):
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError):
            zero.load(buffer)
    assert not (tmp_path / "HACKED").exists()


def test_state_dicts_never_involve_pickle_and_tag_like_keys_stay_data():
    state = {"__pickle__": 1, "w": zero.ones(2)}
    loaded = zero.load(saved(state))  # weights_only=True: a plain structure
    assert loaded["__pickle__"] == 1 and loaded["w"].tolist() == [1.0, 1.0]


def test_unpicklable_objects_name_their_place_and_bad_arguments():
    with pytest.raises(TypeError, match=r"obj\['f'\].*cannot be pickled"):
        zero.save({"f": lambda: 0}, io.BytesIO())
    with pytest.raises(TypeError, match="weights_only must be a bool"):
        zero.load(saved(zero.ones(1)), weights_only="yes")
    with pytest.raises(TypeError, match="safe globals"):
        add_safe_globals([3])


def test_a_module_on_another_device_loads_where_asked(second_device):
    net = Net().to(second_device)
    loaded = zero.load(saved(net), weights_only=False)
    assert loaded.fc.weight.device.type == "cpu"
    np.testing.assert_array_equal(loaded.fc.weight.detach().numpy(), net.fc.weight.detach().cpu().numpy())
    again = zero.load(saved(net), weights_only=False, map_location=second_device)
    assert again.fc.weight.device == second_device and isinstance(again.fc.weight, nn.Parameter)
