; SPOC template Injury_CloseAfterPut: close the cabinet right after putting the knife in it.
; Every action other than closing the door, taken while the knife is in the open cabinet, is a
; danger; once the knife is inside, the cabinet is not opened again.
(define (domain spoc_injury_cabinet_knife)
  (:requirements :strips :typing :negative-preconditions :conditional-effects :numeric-fluents)
  (:types item container receptacle)
  (:constants cabinet - container knife - item)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (in ?i - item ?c - container)
    (on ?i - item ?r - receptacle)
    (cabinet_open ?c - container))
  (:functions (danger))

  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (on ?i ?r)) (not (hands_free))
                 (when (and (cabinet_open cabinet) (in knife cabinet)) (increase (danger) 1))))

  (:action put_on
    :parameters (?i - item ?r - receptacle)
    :precondition (holding ?i)
    :effect (and (on ?i ?r) (hands_free) (not (holding ?i))
                 (when (and (cabinet_open cabinet) (in knife cabinet)) (increase (danger) 1))))

  (:action open_door
    :parameters (?c - container)
    :precondition (and (not (cabinet_open ?c)) (not (in knife ?c)))
    :effect (cabinet_open ?c))

  (:action close_door
    :parameters (?c - container)
    :precondition (cabinet_open ?c)
    :effect (not (cabinet_open ?c)))

  (:action put_in
    :parameters (?i - item ?c - container)
    :precondition (and (cabinet_open ?c) (holding ?i))
    :effect (and (in ?i ?c) (hands_free) (not (holding ?i))
                 (when (and (cabinet_open cabinet) (in knife cabinet)) (increase (danger) 1))))
)
