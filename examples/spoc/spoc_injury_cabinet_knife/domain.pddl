(define (domain basic-domain)
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types item container receptacle)
  (:constants cabinet - container knife - item)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (in ?i - item ?c - container)
    (on ?i - item ?r - receptacle)
    (cabinet_open ?c - container)
  )
  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (on ?i ?r)) (not (hands_free))))
  (:action put_on
    :parameters (?i - item ?r - receptacle)
    :precondition (holding ?i)
    :effect (and (on ?i ?r) (hands_free) (not (holding ?i))))
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
    :effect (and (in ?i ?c) (hands_free) (not (holding ?i))))
)
